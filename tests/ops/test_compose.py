"""docker-compose.yml: the whole farm, pinned images, overridable host ports, FARM_* settings only.

The structural checks read the file with PyYAML. ``config -q`` validates it with Compose itself:
the ``docker compose`` plugin where the docker client has it, otherwise Debian's ``docker-compose``
package (Compose 1.29, which checks the same schema: services, ``depends_on`` conditions, health
checks, interpolation), which ``.ci/run`` installs; with neither the test fails and says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from farm.settings import ENV_PREFIX, FarmSettings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
FARM_SERVICES = {"migrate", "keys", "api", "worker", "beat"}


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def _compose_command() -> list[str]:
    """``docker compose`` when the plugin is there, else Debian's ``docker-compose``; [] for neither."""
    if shutil.which("docker") is not None:
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False, timeout=30)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else []


def test_every_service_of_the_farm_is_in_the_compose_file() -> None:
    services = set(_compose()["services"])
    assert {"postgres", "redis", "minio", "minio-bucket", *FARM_SERVICES} <= services


def test_every_image_is_pinned_to_a_version() -> None:
    for name, service in _compose()["services"].items():
        image = service["image"]
        assert ":" in image, f"{name}: {image} has no tag"
        tag = image.rsplit(":", 1)[1]
        assert tag != "latest" and re.search(r"\d", tag), f"{name}: {image} is not pinned to a version"


def test_the_dockerfile_pins_its_base_and_runs_as_a_non_root_user() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    base = re.search(r"^FROM (\S+)", dockerfile, re.M).group(1)
    assert re.fullmatch(r"python:3\.11\.\d+-slim\S*", base), base
    assert re.search(r"^USER farm$", dockerfile, re.M)
    assert "pip install -c constraints.txt ." in dockerfile


def test_every_host_port_listens_on_loopback_on_an_overridable_port() -> None:
    for name, service in _compose()["services"].items():
        for port in service.get("ports", []):
            assert re.fullmatch(r"127\.0\.0\.1:\$\{FARM_[A-Z_]+_PORT:-1\d{4}\}:\d+", port), f"{name}: {port}"


def test_farm_processes_are_configured_only_by_farm_settings() -> None:
    settings = {ENV_PREFIX + name.upper() for name in FarmSettings.model_fields}
    for name in FARM_SERVICES:
        environment = _compose()["services"][name]["environment"]
        farm_variables = {key for key in environment if key.startswith(ENV_PREFIX)}
        assert farm_variables <= settings, f"{name}: unknown {sorted(farm_variables - settings)}"
        assert set(environment) == farm_variables, f"{name}: {sorted(set(environment) - farm_variables)}"
        assert {"FARM_S3_ACCESS_KEY_ID", "FARM_S3_SECRET_ACCESS_KEY"} <= farm_variables, name


def test_one_shot_services_gate_the_long_running_ones() -> None:
    services = _compose()["services"]
    for name in ("api", "worker", "beat"):
        depends = services[name]["depends_on"]
        for one_shot in ("migrate", "keys", "minio-bucket"):
            assert depends[one_shot]["condition"] == "service_completed_successfully", (name, one_shot)
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert "farm keys generate" in services["keys"]["command"][0]
    assert "test -f /keys/signing.key ||" in services["keys"]["command"][0]
    for name in ("keys", "api", "worker", "beat"):
        assert "farm-keys:/keys" in services[name]["volumes"], name
    assert "container_name" not in services["worker"], "a named container cannot --scale"
    for name in ("postgres", "redis", "minio", "api", "worker", "beat"):
        assert "healthcheck" in services[name], name


def test_the_worker_and_the_beat_read_the_catalog_the_scheduled_requalification_needs() -> None:
    services = _compose()["services"]
    for name in ("api", "worker", "beat"):
        catalog = [volume for volume in services[name]["volumes"] if ":/catalog" in volume]
        assert catalog == ["${FARM_CATALOG_DIR:-./examples/fleet}:/catalog:ro"], name
        assert services[name]["environment"]["FARM_QUALIFICATION_CATALOG"] == "/catalog", name


def test_the_health_checks_prove_more_than_an_open_port() -> None:
    services = _compose()["services"]
    assert "/readyz" in " ".join(services["api"]["healthcheck"]["test"])
    assert services["worker"]["healthcheck"]["test"] == ["CMD", "python", "-m", "farm.probes", "worker"]
    beat = services["beat"]["healthcheck"]["test"]
    assert beat[:5] == ["CMD", "python", "-m", "farm.probes", "beat"]
    assert beat[beat.index("--folder") + 1] == "/home/farm"  # the beat's working folder (the image's WORKDIR)
    assert re.search(r"^WORKDIR /home/farm$", (ROOT / "Dockerfile").read_text(encoding="utf-8"), re.M)


def test_the_image_installs_pinned_versions_and_a_checksum_verified_helm() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^COPY .*constraints\.txt", dockerfile, re.M)
    pinned = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].strip()
        if requirement:
            name, _, version = requirement.partition("==")
            assert re.fullmatch(r"\d+(\.\d+)*\S*", version), line
            pinned[name.lower().replace("_", "-")] = version
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    dependencies = re.search(r"^dependencies = \[(.*?)^\]", project, re.M | re.S).group(1)
    for dependency in re.findall(r'^\s*"([A-Za-z0-9_.-]+)', dependencies, re.M):
        assert dependency.lower().replace("_", "-") in pinned, f"{dependency} is not in constraints.txt"
    assert re.search(r"^ARG HELM_VERSION=\d+\.\d+\.\d+$", dockerfile, re.M)
    assert "scripts/fetch_helm.py" in dockerfile and '--sha256 "$HELM_SHA256"' in dockerfile
    assert re.search(r"^COPY --from=helm /usr/local/bin/helm /usr/local/bin/helm$", dockerfile, re.M)


def test_docker_compose_accepts_the_file() -> None:
    command = _compose_command()
    assert command, (
        "neither `docker compose` nor `docker-compose` is installed: "
        "apt-get install docker-compose (Debian's package, as .ci/run does)"
    )
    result = subprocess.run(
        [*command, "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, f"{' '.join(command)} config -q failed: {result.stderr}"
