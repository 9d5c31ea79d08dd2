"""The example catalog, copied for each test that edits it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    target = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, target)
    return target
