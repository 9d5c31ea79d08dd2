"""``farm build`` renders through the workers' render step: bounded in time and memory by the same
settings (FARM_RENDER_TIMEOUT_SECONDS, FARM_RENDER_MEMORY_MIB), so a hostile application stops
with one ``Error:`` line naming the bound instead of growing without limit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROFILE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: edge
spec:
  capabilities: {}
"""


def _heavy_app(folder: Path, keys: int) -> Path:
    body = "".join(f"            k{i:07d}: v{i:07d}\n" for i in range(keys))
    (folder / "app.yaml").write_text(
        "apiVersion: launcher.gokure.dev/v1alpha1\nkind: Application\nmetadata:\n  name: heavy\n"
        "  namespace: apps\nspec:\n  components:\n    - name: heavy\n      type: passthrough\n"
        "      properties:\n        object:\n          apiVersion: v1\n          kind: ConfigMap\n"
        "          metadata:\n            name: big\n          data:\n" + body
    )
    (folder / "cluster.yaml").write_text(PROFILE)
    return folder


def _build(folder: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("FARM_")} | settings
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "farm",
            "build",
            str(folder / "app.yaml"),
            "--profile",
            str(folder / "cluster.yaml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=240,
        check=False,
    )


@pytest.mark.timeout(300)
def test_farm_build_past_the_memory_bound_is_one_error_line_naming_render_memory(tmp_path: Path) -> None:
    result = _build(_heavy_app(tmp_path, 40_000), FARM_RENDER_MEMORY_MIB="24")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "Error: the render needed more than 24 MiB and was stopped [render.memory]"
    ]


@pytest.mark.timeout(300)
def test_farm_build_past_the_time_bound_is_one_error_line_naming_render_timeout(tmp_path: Path) -> None:
    result = _build(_heavy_app(tmp_path, 40_000), FARM_RENDER_TIMEOUT_SECONDS="0.05")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: the render took longer than 0.05 s and was stopped [render.timeout]"
    ]


@pytest.mark.timeout(300)
def test_farm_build_within_the_bounds_renders_the_heavy_application(tmp_path: Path) -> None:
    result = _build(_heavy_app(tmp_path, 2_000))
    assert result.returncode == 0, result.stderr
    assert "kind: ConfigMap" in result.stdout and "k0001999: v0001999" in result.stdout
