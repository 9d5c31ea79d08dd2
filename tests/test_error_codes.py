"""Every error code the farm can report is ``area.reason`` and is listed with its meaning in
docs/errors.md, and every code listed there is still one the code can report."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "errors.md"
CODE = re.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
FILE_SUFFIXES = {"html", "json", "yaml", "log", "sock", "key", "pub", "py", "txt", "tgz"}
ERROR_CALLS = {
    "Failure": 0,
    "EvidenceError": 0,
    "ProfileError": 0,
    "RequestRefused": 0,
    "BoundExceeded": 0,
    "Problem": 1,
}


def documented() -> set[str]:
    """The codes of docs/errors.md: the first cell of each table row, in backquotes."""
    return set(re.findall(r"^\| `([a-z0-9_.]+)` \|", DOC.read_text(), re.MULTILINE))


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def codes_in(path: Path, areas: set[str]) -> dict[str, int]:
    """Error codes written in one module: ``code = "…"`` attributes, the code argument of the
    farm's error values, and any literal ``area.reason`` of a documented area."""
    found: dict[str, int] = {}
    tree = ast.parse(path.read_text(), str(path))
    in_fstrings = {
        id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values
    }
    for node in ast.walk(tree):
        candidates: list[str | None] = []
        if isinstance(node, ast.Assign) and any(
            (isinstance(t, ast.Name) and t.id == "code")
            or (isinstance(t, ast.Attribute) and t.attr == "code")
            for t in node.targets
        ):
            candidates.append(_literal(node.value))
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name in ERROR_CALLS and len(node.args) > ERROR_CALLS[name]:
                candidates.append(_literal(node.args[ERROR_CALLS[name]]))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstrings:
            if not CODE.match(node.value):
                continue
            area, _, reason = node.value.partition(".")
            if area in areas and reason not in FILE_SUFFIXES:
                candidates.append(node.value)
        for code in candidates:
            if code is not None:
                found.setdefault(code, node.lineno)
    return found


def _all_codes() -> dict[str, str]:
    areas = {code.partition(".")[0] for code in documented()}
    codes: dict[str, str] = {}
    for path in sorted((ROOT / "farm").rglob("*.py")):
        for code, line in codes_in(path, areas).items():
            codes.setdefault(code, f"{path.relative_to(ROOT)}:{line}")
    return codes


def test_every_error_code_is_area_dot_reason() -> None:
    codes = _all_codes()
    assert {code: where for code, where in codes.items() if not CODE.match(code)} == {}


def test_every_error_code_is_listed_with_its_meaning_in_docs_errors_md() -> None:
    codes = _all_codes()
    assert {code: where for code, where in codes.items() if code not in documented()} == {}


def test_docs_errors_md_lists_no_code_the_farm_no_longer_reports() -> None:
    assert documented() - set(_all_codes()) == set()


def test_the_code_finder_sees_each_way_a_code_is_written(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'class E(Exception):\n    code = "render.error"\n'
        'Failure("signature.invalid", "t", "m")\nProblem("f", "catalog.unsafe_file", "m")\n'
        'X = "render.timeout"\nT = "run.html"\n'
    )
    assert set(codes_in(module, {"render", "run"})) == {
        "render.error",
        "signature.invalid",
        "catalog.unsafe_file",
        "render.timeout",
    }
