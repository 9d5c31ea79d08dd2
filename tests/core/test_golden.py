"""The project's own golden cases: every folder under tests/golden/ holds app.yaml, cluster.yaml,
optional kurel.yaml / values.yaml / args (extra `farm build` flags, one per line) / policy.yaml
(fields of the environment policy, farm.core.policy.Policy, for the case) / charts/ (a chart folder,
charts/<chart>/Chart.yaml: the case's chart renders are answered by `helm template` over it, with
tests/helm_standin.py on PATH as helm, as `farm build --charts` answers them), and either
expected.yaml (the exact output) or expected-error.txt (the exact `Error: ...` line on stderr;
expected-refusal-class.txt beside it pins a policy refusal's class)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from farm.build.charts import render_with_charts, with_build_charts
from farm.core import yamlio
from farm.core.errors import CoreError, PolicyRefusal
from farm.core.policy import DEFAULT_POLICY, Policy
from farm.core.render import RenderRequest, ValuesLayer, render

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
STANDIN = GOLDEN.parent / "helm_standin.py"
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


def _policy(case: Path) -> Policy:
    policy_file = case / "policy.yaml"
    if not policy_file.exists():
        return DEFAULT_POLICY
    fields = yamlio.load(policy_file.read_bytes(), source=str(policy_file)) or {}
    return Policy(
        **{key: tuple(value) if isinstance(value, list) else value for key, value in fields.items()}
    )


def case_request(case: Path) -> RenderRequest:
    """The render request of a golden case folder: its documents and its --set and -n flags."""
    package = case / "kurel.yaml"
    values = case / "values.yaml"
    options = _args(case)
    return RenderRequest(
        (case / "app.yaml").read_bytes(),
        (case / "cluster.yaml").read_bytes(),
        package=package.read_bytes() if package.exists() else None,
        values=(ValuesLayer("values.yaml", values.read_bytes()),) if values.exists() else (),
        sets=tuple(options["sets"]),
        namespace=options.get("namespace"),
    )


def _render(case: Path) -> bytes:
    request = case_request(case)
    charts = case / "charts"
    if charts.is_dir():
        request = with_build_charts(request, charts)  # the chart folder packed into the request
        return render_with_charts(render, request, policy=_policy(case)).manifests
    return render(request, policy=_policy(case)).manifests


@pytest.fixture
def helm_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in as the only ``helm`` on PATH."""
    helm = tmp_path / "bin" / "helm"
    helm.parent.mkdir()
    helm.write_text(f"#!{sys.executable}\n" + STANDIN.read_text())
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", str(helm.parent))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_case(case: Path, helm_on_path: None) -> None:
    expected_error = case / "expected-error.txt"
    if expected_error.exists():
        with pytest.raises(CoreError) as caught:
            _render(case)
        assert f"Error: {caught.value.message}" == expected_error.read_text().strip()
        refusal_class = case / "expected-refusal-class.txt"
        if refusal_class.exists():
            assert isinstance(caught.value, PolicyRefusal)
            assert caught.value.refusal_class == refusal_class.read_text().strip()
    else:
        assert _render(case).decode() == (case / "expected.yaml").read_text()
