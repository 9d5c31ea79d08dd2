"""Every module of farm/core imports on its own, and no two core modules import each other.

A cycle can pass unnoticed while something else happens to import one side first; a caller that
imports the other side first (an application whose first chart component is ``helmtemplate``)
then fails. So each module is imported first, in a fresh set of ``farm`` modules, and the import
graph is checked for cycles, counting an import inside a function as an edge too (deferring an
import hides a cycle; it does not remove it)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "farm" / "core"

_IMPORT_EACH = """
import importlib, json, sys, traceback
failures = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "farm" or m.startswith("farm.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failures[name] = traceback.format_exc(limit=-3)
print(json.dumps(failures))
"""


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _core_modules(root: Path = ROOT, package: str = "farm/core") -> dict[str, Path]:
    return {_module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test).endswith("TYPE_CHECKING")


def _imported(tree: ast.AST, modules: dict[str, Path], own: str) -> set[str]:
    """The modules of ``modules`` that a module imports, anywhere but under ``if TYPE_CHECKING``."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_type_checking(node):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = own.split(".") if modules[own].name == "__init__.py" else own.split(".")[:-1]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
    return {name for name in found if name in modules and name != own}


def _cycles(modules: dict[str, Path]) -> list[list[str]]:
    graph = {name: _imported(ast.parse(path.read_text()), modules, name) for name, path in modules.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return cycles


def test_every_core_module_imports_on_its_own_in_a_fresh_process() -> None:
    names = sorted(_core_modules())
    assert "farm.core.components.helmtemplate" in names
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, json.dumps(names)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == {}


def test_no_two_core_modules_import_each_other_directly_or_through_others() -> None:
    assert _cycles(_core_modules()) == []


def test_the_cycle_check_sees_a_cycle_even_through_an_import_inside_a_function(tmp_path: Path) -> None:
    package = tmp_path / "farm" / "core"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from farm.core import b\n")
    (package / "b.py").write_text("def f():\n    from farm.core.c import x\n")
    (package / "c.py").write_text("import farm.core.a\nfrom typing import TYPE_CHECKING\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from farm.core import a\n"
    )
    modules = _core_modules(tmp_path)
    assert _cycles(modules) == [["farm.core.a", "farm.core.b", "farm.core.c", "farm.core.a"]]
