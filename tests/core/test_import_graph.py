"""farm/core imports nothing from the rest of farm/ (the core never imports the shell)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "farm" / "core"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_core_imports_only_core_from_farm() -> None:
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        for name in _imports(path):
            if (name == "farm" or name.startswith("farm.")) and not name.startswith("farm.core"):
                offenders.append(f"{path.relative_to(CORE.parent.parent)} imports {name}")
            if name.startswith("workers") or name.split(".")[0] in {"sqlalchemy", "boto3", "celery", "redis"}:
                offenders.append(f"{path.relative_to(CORE.parent.parent)} imports {name}")
    assert offenders == []


def test_registry_rows_load_and_name_their_type() -> None:
    from farm.core.registry import seal

    assert seal() == []


def test_import_graph_check_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from farm.store import models\nimport farm.scheduler\n")
    assert _imports(bad) == ["farm.store", "farm.scheduler"]
