"""The project's own golden cases: every folder under tests/golden/ holds app.yaml, cluster.yaml,
optional kurel.yaml / values.yaml / args (extra `farm build` flags, one per line), and either
expected.yaml (the exact output) or expected-error.txt (the exact `Error: ...` line on stderr)."""

from __future__ import annotations

from pathlib import Path

import pytest

from farm.core.errors import CoreError
from farm.core.render import render

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("*/app.yaml"))


def _args(case: Path) -> dict:
    options: dict = {"sets": []}
    args_file = case / "args"
    if args_file.exists():
        for line in args_file.read_text().splitlines():
            flag, _, value = line.strip().partition(" ")
            if flag == "--set":
                options["sets"].append(value)
            elif flag in ("-n", "--namespace"):
                options["namespace"] = value
    return options


def _render(case: Path) -> bytes:
    package = case / "kurel.yaml"
    values = case / "values.yaml"
    options = _args(case)
    return render(
        (case / "app.yaml").read_bytes(),
        (case / "cluster.yaml").read_bytes(),
        package=package.read_bytes() if package.exists() else None,
        values=values.read_bytes() if values.exists() else None,
        sets=tuple(options["sets"]),
        namespace=options.get("namespace"),
    ).manifests


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_case(case: Path) -> None:
    expected_error = case / "expected-error.txt"
    if expected_error.exists():
        with pytest.raises(CoreError) as caught:
            _render(case)
        assert f"Error: {caught.value.message}" == expected_error.read_text().strip()
    else:
        assert _render(case).decode() == (case / "expected.yaml").read_text()
