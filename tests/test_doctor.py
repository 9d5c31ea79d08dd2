"""``farm doctor`` on the embedded default: one line per check with what to do, exit 1 when one
fails, ``--json``; it creates nothing. (The distributed set-up: tests/fleet/test_doctor_distributed.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fleet.conftest import helm_environment, make_catalog, no_helm_environment, write_helm_app

from farm.store.migrate import HEAD_REVISION

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "fleet"
CHECKS = ["settings", "database", "broker", "object store", "signing key", "helm", "daemon"]


def doctor(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "farm", *(args or ("doctor",))],
        env=clean,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def checks(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] == (result.returncode == 0)
    return {check["name"]: check for check in report["checks"]}


def test_doctor_in_a_fresh_folder_passes_every_check_and_creates_nothing(tmp_path: Path) -> None:
    result = doctor(tmp_path, "doctor", env=no_helm_environment(tmp_path / "bin"))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"ok    {name}" for name in CHECKS]
    assert "not created yet (the first farm run creates it)" in lines[1]
    assert "not generated yet (the first farm run generates it)" in lines[4]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bin"]


def test_doctor_fails_the_folders_a_farm_home_that_is_a_file_keeps_the_first_run_from_making(
    tmp_path: Path,
) -> None:
    # every check passed, saying "not created yet (the first farm run creates it)"; the run failed
    home = tmp_path / "home"
    home.write_text("notes\n")
    result = doctor(tmp_path, "doctor", "--json", env={"FARM_HOME": str(home)})
    found = checks(result)
    assert result.returncode == 1
    failed = {name for name, check in found.items() if not check["ok"]}
    assert failed == {"database", "object store", "signing key"}
    assert found["database"]["detail"] == (
        f"{home}: is a file, not a folder (FARM_HOME, and the FARM_* settings naming paths, name folders)"
    )
    assert found["object store"]["detail"].startswith(f"{home}: is a file, not a folder: {home / 'objects'}")
    assert home.read_text() == "notes\n"


@pytest.mark.timeout(300)
def test_doctor_after_a_first_run_passes_every_check_on_the_embedded_default(tmp_path: Path) -> None:
    ran = doctor(tmp_path, "run", str(EXAMPLES), "--json", env={"FARM_DAEMON": "off"})
    assert ran.returncode == 0, ran.stderr
    result = doctor(tmp_path, "doctor", "--json")
    found = checks(result)
    assert result.returncode == 0, result.stdout
    assert list(found) == CHECKS and all(check["ok"] for check in found.values())
    assert found["database"]["detail"].endswith(f": reachable, at revision {HEAD_REVISION}")
    assert found["signing key"]["detail"].endswith(", trusted")
    assert found["object store"]["detail"] == f"folder {tmp_path / '.farm' / 'objects'}: present"


def test_doctor_fails_a_signing_key_the_trusted_signers_do_not_hold(tmp_path: Path) -> None:
    made = doctor(tmp_path, "keys", "generate", "--out", str(tmp_path / "other"))
    assert made.returncode == 0, made.stderr
    env = {
        "FARM_SIGNING_KEY": str(tmp_path / "other" / "signing.key"),
        "FARM_TRUSTED_SIGNERS": str(tmp_path / "none"),
    }
    result = doctor(tmp_path, "doctor", "--json", env=env)
    assert result.returncode == 1
    key = checks(result)["signing key"]
    assert not key["ok"]
    assert "is not trusted by" in key["detail"] and "farm keys trust PUBKEY" in key["detail"]


def test_doctor_fails_a_configured_signing_key_that_does_not_exist(tmp_path: Path) -> None:
    result = doctor(tmp_path, "doctor", env={"FARM_SIGNING_KEY": str(tmp_path / "gone.key")})
    assert result.returncode == 1
    assert (
        f"FAIL  signing key: {tmp_path / 'gone.key'} does not exist: restore it, or make one with farm keys generate"
        in result.stdout
    )


def test_doctor_reports_a_bad_setting_in_one_failing_line(tmp_path: Path) -> None:
    result = doctor(tmp_path, "doctor", env={"FARM_BATCH_SIZE": "0"})
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "FAIL  settings: invalid farm settings: FARM_BATCH_SIZE: Input should be greater than or equal to 1 "
        "(fix the variable it names)"
    ]


def test_doctor_fails_without_helm_when_the_catalog_has_chart_components(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a",))
    write_helm_app(catalog, "web", "https://charts.example.com")  # delivery: template
    missing = doctor(
        tmp_path, "doctor", "--catalog", str(catalog.root), env=no_helm_environment(tmp_path / "bin")
    )
    assert missing.returncode == 1
    assert (
        f"FAIL  helm: not on PATH, and catalog {catalog.root} has chart components (web): install helm 3"
        in missing.stdout
    )
    present = doctor(
        tmp_path, "doctor", "--catalog", str(catalog.root), env=helm_environment(tmp_path / "bin", "v3.14.2")
    )
    assert present.returncode == 0, present.stdout
    assert "ok    helm: v3.14.2 at " in present.stdout


def test_doctor_passes_without_helm_when_the_catalog_s_helm_components_are_delivered_by_flux(
    tmp_path: Path,
) -> None:
    result = doctor(tmp_path, "doctor", "--catalog", str(EXAMPLES), env=no_helm_environment(tmp_path / "bin"))
    assert result.returncode == 0, result.stdout
    assert (
        f"ok    helm: not on PATH; not needed: catalog {EXAMPLES} renders no chart with helm" in result.stdout
    )


def test_doctor_reports_the_daemon_that_serves_the_home(tmp_path: Path) -> None:
    started = doctor(tmp_path, "daemon", "start", "--idle", "120")
    assert started.returncode == 0, started.stderr
    try:
        result = doctor(tmp_path, "doctor", "--json")
        assert checks(result)["daemon"]["detail"].startswith("pid ")
        assert f"serves {tmp_path / '.farm'}" in checks(result)["daemon"]["detail"]
    finally:
        doctor(tmp_path, "daemon", "stop")


PARAMETERISED_PACKAGE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Package
metadata:
  name: web
  version: 1.0.0
spec:
  parameters:
    - name: renderer
      type: string
      default: helmtemplate
"""
PARAMETERISED_CHART_APP = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: web
  namespace: shop
spec:
  components:
    - name: web
      type: ${renderer}
      properties:
        chart: web
        version: 1.2.0
        source:
          url: https://charts.example.com
"""


def test_doctor_fails_without_helm_when_a_chart_component_s_type_comes_from_a_parameter(
    tmp_path: Path,
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a",))
    folder = catalog.root / "applications" / "web"
    folder.mkdir()
    (folder / "kurel.yaml").write_text(PARAMETERISED_PACKAGE)
    (folder / "app.yaml").write_text(PARAMETERISED_CHART_APP)
    result = doctor(
        tmp_path, "doctor", "--catalog", str(catalog.root), env=no_helm_environment(tmp_path / "bin")
    )
    assert result.returncode == 1
    assert (
        f"FAIL  helm: not on PATH, and catalog {catalog.root} has chart components (web): install helm 3"
        in result.stdout
    )
    (folder / "kurel.yaml").write_text(PARAMETERISED_PACKAGE.replace("helmtemplate", "webservice"))
    (folder / "app.yaml").write_text(APP_OF_ANY_TYPE)
    no_chart = doctor(
        tmp_path, "doctor", "--catalog", str(catalog.root), env=no_helm_environment(tmp_path / "bin")
    )
    assert f"ok    helm: not on PATH; not needed: catalog {catalog.root} renders no chart with helm" in (
        no_chart.stdout
    )


APP_OF_ANY_TYPE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: web
  namespace: shop
spec:
  components:
    - name: web
      type: ${renderer}
      properties:
        image: ghcr.io/example/web:v1.0.0
        port: 8080
"""
