"""The shared golden cases (../shared/conformance/cases), run through `farm build` in-process.

A case whose component and trait types are all claimed by the registry must pass byte for byte.
Cases with a type the registry does not claim are reported by the conformance runner, not here.
The test is skipped (not counted as passing) only when the shared folder does not exist."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from farm.core import yamlio
from farm.core.registry import COMPONENT_TYPES, TRAIT_TYPES
from farm.core.render import RenderRequest, ValuesLayer, render

# ../shared beside the checkout, or wherever FARM_CONFORMANCE_CASES points.
CASES_DIR = Path(
    os.environ.get("FARM_CONFORMANCE_CASES")
    or Path(__file__).resolve().parents[2] / "shared" / "conformance" / "cases"
)
CASES = sorted(p.parent for p in CASES_DIR.glob("*/app.yaml")) if CASES_DIR.is_dir() else []


def _claimed(case: Path) -> bool:
    app = yamlio.load((case / "app.yaml").read_bytes()) or {}
    for component in (app.get("spec") or {}).get("components") or []:
        if component.get("type") not in COMPONENT_TYPES:
            return False
        for trait in component.get("traits") or []:
            if trait.get("type") not in TRAIT_TYPES:
                return False
    return True


CLAIMED = [c for c in CASES if _claimed(c)]


@pytest.mark.skipif(not CASES_DIR.is_dir(), reason="../shared/conformance/cases is not present")
def test_registry_claims_some_shared_cases() -> None:
    assert CLAIMED, "the registry claims no type used by the shared cases"


@pytest.mark.parametrize("case", CLAIMED, ids=[c.name for c in CLAIMED])
def test_shared_case(case: Path) -> None:
    package = case / "kurel.yaml"
    values = case / "values.yaml"
    request = RenderRequest(
        (case / "app.yaml").read_bytes(),
        (case / "cluster.yaml").read_bytes(),
        package=package.read_bytes() if package.exists() else None,
        values=(ValuesLayer("values.yaml", values.read_bytes()),) if values.exists() else (),
    )
    rendered = render(request)
    assert rendered.manifests.decode().strip() == (case / "expected.yaml").read_text().strip()
