"""The hostile corpus through ``farm build``: every document fails alone, quickly, within a memory
bound, with exactly one ``Error:`` line that names where the problem is, and no traceback.

``apps/*.yaml`` are hostile Applications, built with ``good/cluster.yaml``; ``profiles/*.yaml`` are
hostile ClusterProfiles, built with ``good/app.yaml``. The first line of each file,
``# expect: <text>``, is how its Error line must begin (``{file}`` stands for the file's path).
Inputs too large to keep in the repository (a 50 MB image) are written at test time.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
GOOD_APP, GOOD_PROFILE = HERE / "good" / "app.yaml", HERE / "good" / "cluster.yaml"
CORPUS = sorted((HERE / "apps").glob("*.yaml")) + sorted((HERE / "profiles").glob("*.yaml"))
MEMORY_BOUND = 2 * 1024**3  # address space of one build, bytes
TIME_BOUND = 60  # seconds of one build
MAX_LINE = 1000  # characters of the Error line


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BOUND, MEMORY_BOUND))


def farm_build(app: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    return subprocess.run(
        [sys.executable, "-m", "farm", "build", str(app), "--profile", str(profile), *extra],
        capture_output=True,
        text=True,
        timeout=TIME_BOUND,
        env=env,
        preexec_fn=_bounded,
    )


def the_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 1, result.stderr[-2000:]
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("Error: ")
    assert len(lines[0]) < MAX_LINE
    return lines[0]


def expectation(path: Path) -> str:
    first = path.read_text(errors="replace").split("\n", 1)[0]
    assert first.startswith("# expect: "), f"{path.name} has no '# expect:' first line"
    return first.removeprefix("# expect: ").replace("{file}", str(path))


def test_the_corpus_holds_well_over_150_hostile_documents() -> None:
    assert len(CORPUS) >= 150


def test_the_good_application_and_profile_render() -> None:
    result = farm_build(GOOD_APP, GOOD_PROFILE)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and "kind: Deployment" in result.stdout


@pytest.mark.timeout(TIME_BOUND + 30)
@pytest.mark.parametrize("path", CORPUS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_a_hostile_document_fails_alone_with_one_error_line_naming_where(path: Path) -> None:
    if path.parent.name == "apps":
        result = farm_build(path, GOOD_PROFILE)
    else:
        result = farm_build(GOOD_APP, path)
    line = the_error_line(result)
    assert line.startswith("Error: " + expectation(path))
    # Where: the file, or the component/object/ClusterProfile the reference's message names.
    where = line.removeprefix("Error: ").split(": ", 1)[0]
    assert str(path) in where or '"' in where, line


def write_app(folder: Path, name: str, image: str) -> Path:
    path = folder / "app.yaml"
    path.write_text(
        "apiVersion: launcher.gokure.dev/v1alpha1\nkind: Application\nmetadata:\n"
        f"  name: {name}\nspec:\n  components:\n    - name: web\n      type: webservice\n"
        f'      properties:\n        image: "{image}"\n        port: 8080\n'
    )
    return path


@pytest.mark.timeout(TIME_BOUND + 30)
def test_a_fifty_megabyte_image_is_refused_without_echoing_it(tmp_path: Path) -> None:
    image = "registry.example/app:" + "a" * 50_000_000
    line = the_error_line(farm_build(write_app(tmp_path, "web", image), GOOD_PROFILE))
    assert line.startswith(
        'Error: component "web" (type "webservice") in document "web": image: image "registry.example/app:aaaa'
    )
    assert f"… ({len(image)} characters)" in line


@pytest.mark.timeout(TIME_BOUND + 30)
def test_a_ten_megabyte_application_name_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = write_app(tmp_path, "n" * 10_000_000, "nginx:1.27.0")
    line = the_error_line(farm_build(path, GOOD_PROFILE))
    assert line.startswith(f"Error: {path}: metadata.name 'nnnn")
    assert "… (10000000 characters)" in line


@pytest.mark.timeout(TIME_BOUND + 30)
@pytest.mark.parametrize(
    "namespace", ["../../etc", "apps\n", "Apps", "a.b", "-apps", "a" * 64, "a b", "ns/../x"]
)
def test_a_namespace_flag_that_is_not_a_dns_label_is_refused(namespace: str) -> None:
    line = the_error_line(farm_build(GOOD_APP, GOOD_PROFILE, "-n", namespace))
    shown = namespace.replace("\n", "\\n")
    assert line.startswith(f'Error: namespace "{shown}": must be a DNS-1123 label')


@pytest.mark.timeout(TIME_BOUND + 30)
def test_an_object_over_the_api_servers_limit_is_refused_naming_it(tmp_path: Path) -> None:
    profile = tmp_path / "cluster.yaml"
    profile.write_text(
        GOOD_PROFILE.read_text().replace("ingressClassName: nginx", f"ingressClassName: {'n' * 1_600_000}")
    )
    line = the_error_line(farm_build(GOOD_APP, profile))
    assert line.startswith('Error: Ingress "apps/web')
    assert line.endswith("bytes, over the 1572864 bytes the Kubernetes API server accepts for one object")
