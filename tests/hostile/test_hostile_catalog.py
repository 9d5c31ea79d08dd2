"""The hostile corpus through ``farm run``: hostile catalogs, each a copy of ``examples/fleet`` with
one thing changed, run in a subprocess bounded in time and memory.

Each case ends one of four ways, and never with a traceback, a hang or a read outside the catalog
(a marker, ``hunter2-outside-<case>``, is placed beside the catalog where a followed link would lead; it
must appear in no output, no message and no file of the farm's home):

- ``error``: the load stops; exit 1, every stderr line an ``Error:`` line, nothing planned;
- ``fails``: the hostile target(s) fail with their code, every other target renders; exit 1;
- ``warning``: a ``warning:`` line names the file, every target renders; exit 0;
- ``renders``: a legal input the farm once refused with a traceback; every target renders.

Classes, by case id prefix: ``symlink-*`` (a link in place of a folder the catalog reads),
``path-*`` (a folder of fleet.yaml leaving the catalog or missing), ``nan-*``, ``inf-*`` (a
non-finite number in a ClusterProfile), ``quantity-*``, ``too-large-*`` (an emitted object over
the API server's limit), ``unread-*`` (a file the loader does not read), ``name-*`` (a packaged
application's name), ``namespace-*`` (rules that disagree), ``selection-*`` (a target selecting
an undeclared profile or value), ``multidoc-*`` (a second document),
``strict-*`` (a warning under ``--strict``).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"
MARKER = "hunter2-outside"
MEMORY_BOUND = 2 * 1024**3  # address space of one run, bytes
TIME_BOUND = 120  # seconds of one run

Edit = Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    id: str
    edit: Edit
    outcome: str  # error | fails | warning | renders
    expect: str  # the start of the Error line; the failure code; the warning's text
    extra: tuple[str, ...] = ()


def marker(catalog: Path) -> str:
    """The marker of one case (cases share a farm home; each looks only for its own marker)."""
    return f"{MARKER}-{hashlib.sha256(str(catalog).encode()).hexdigest()[:8]}"


def _outside(catalog: Path, folder: str) -> Path:
    """``folder`` moved beside the catalog, with something to find there if a link were followed."""
    outside = catalog.parent / f"outside-{folder.replace('/', '-')}"
    (catalog / folder).rename(outside)
    secret = marker(catalog)
    (outside / f"{secret}.yaml").write_text(f"password: {secret}\n")
    if folder == "applications":  # an application folder, which a followed link would load
        (outside / secret).mkdir()
        (outside / secret / "app.yaml").write_text(f"password: {secret}\n")
    return outside


def _link_folder(folder: str) -> Edit:
    def edit(catalog: Path) -> None:
        (catalog / folder).symlink_to(_outside(catalog, folder))

    return edit


def _link_on_the_way(catalog: Path) -> None:
    team = catalog.parent / "team"
    team.mkdir()
    _outside(catalog, "applications").rename(team / "applications")
    (catalog / "team").symlink_to(team)
    _replace(catalog / "fleet.yaml", "  applications: applications", "  applications: team/applications")


def _link_values(catalog: Path) -> None:
    outside = catalog.parent / "outside-values"
    outside.mkdir()
    (outside / "prod-nginx.yaml").write_text(f"image: {marker(catalog)}\n")
    (catalog / "applications" / "greeter" / "values").symlink_to(outside)


def _link_application(catalog: Path) -> None:
    (catalog / "applications" / "search").symlink_to(_outside(catalog, "applications/search"))


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _fleet_field(field: str, value: str) -> Edit:
    return lambda catalog: _replace(catalog / "fleet.yaml", f"  {field}: {field}", f"  {field}: {value}")


def _append(file: str, text: str) -> Edit:
    return lambda catalog: (catalog / file).write_text((catalog / file).read_text() + text)


def _write(file: str, text: str) -> Edit:
    def edit(catalog: Path) -> None:
        (catalog / file).parent.mkdir(parents=True, exist_ok=True)
        (catalog / file).write_text(text)

    return edit


def _rename_greeter(folder: str) -> Edit:
    return lambda catalog: (catalog / "applications" / "greeter").rename(catalog / "applications" / folder)


def _memory(quantity: str) -> Edit:
    return lambda catalog: _replace(
        catalog / "applications" / "search" / "app.yaml",
        "        port: 9000\n",
        f"        port: 9000\n        resources:\n          limits:\n            memory: {quantity}\n",
    )


def _huge_ingress_class(catalog: Path) -> None:
    _replace(
        catalog / "clusters" / "staging-traefik.yaml",
        "ingressClassName: traefik",
        f"ingressClassName: {'t' * 1_600_000}",
    )


def _dot_folder(catalog: Path) -> None:
    shutil.copytree(catalog / "applications" / "search", catalog / "applications" / ".search-old")


CAPABILITY = "    weird:\n      rendering:\n        {}\n"
CASES = [
    Case("symlink-applications", _link_folder("applications"), "error", "applications: is a symbolic link"),
    Case("symlink-clusters", _link_folder("clusters"), "error", "clusters: is a symbolic link"),
    Case("symlink-profiles", _link_folder("profiles"), "error", "profiles: is a symbolic link"),
    Case("symlink-on-the-way", _link_on_the_way, "error", "team: is a symbolic link"),
    Case("symlink-values-folder", _link_values, "fails", "catalog.unsafe_file"),
    Case("symlink-application-folder", _link_application, "fails", "catalog.unsafe_file"),
    Case(
        "path-profiles-dot-dot",
        _fleet_field("profiles", "../outside"),
        "error",
        "fleet.yaml: spec.profiles: '../outside'",
    ),
    Case(
        "path-clusters-absolute",
        _fleet_field("clusters", "/etc"),
        "error",
        "fleet.yaml: spec.clusters: '/etc'",
    ),
    Case(
        "path-profiles-missing",
        _fleet_field("profiles", "profile"),
        "error",
        "fleet.yaml: spec.profiles: folder 'profile'",
    ),
    Case(
        "nan-cluster-profile",
        _append("clusters/prod-nginx.yaml", CAPABILITY.format("x: .nan")),
        "fails",
        "document.invalid",
    ),
    Case(
        "inf-cluster-profile-list",
        _append("clusters/prod-gateway.yaml", CAPABILITY.format("x: [1, -.inf]")),
        "fails",
        "document.invalid",
    ),
    Case(
        "inf-cluster-profile-key",
        _append("clusters/staging-traefik.yaml", CAPABILITY.format("port: {x: .INF}")),
        "fails",
        "document.invalid",
    ),
    Case("quantity-memory-1Ei", _memory("1Ei"), "renders", ""),
    Case("quantity-memory-8Ei", _memory("8Ei"), "renders", ""),
    Case("too-large-ingress-class", _huge_ingress_class, "fails", "render.object_too_large"),
    Case(
        "unread-cluster-yml",
        _write("clusters/prod-extra.yml", "kind: ClusterProfile\n"),
        "warning",
        "clusters/prod-extra.yml: not read",
    ),
    Case(
        "unread-cluster-upper-yaml",
        _write("clusters/prod-extra.YAML", "kind: ClusterProfile\n"),
        "warning",
        "clusters/prod-extra.YAML: not read",
    ),
    Case(
        "unread-values-yml",
        _write("applications/greeter/values.yml", "replicas: 9\n"),
        "warning",
        "applications/greeter/values.yml: not read",
    ),
    Case(
        "unread-cluster-values-yml",
        _write("applications/greeter/values/prod-nginx.yml", "replicas: 9\n"),
        "warning",
        "applications/greeter/values/prod-nginx.yml: not read",
    ),
    Case("unread-dot-folder", _dot_folder, "warning", "applications/.search-old: not read"),
    Case(
        "unread-plain-file",
        _write("applications/NOTES.md", "todo\n"),
        "warning",
        "applications/NOTES.md: not read",
    ),
    Case("name-packaged-folder-differs", _rename_greeter("greeter-two"), "fails", "document.invalid"),
    Case("name-packaged-script-folder", _rename_greeter("<script>alert(1)<"), "fails", "document.invalid"),
    Case(
        "namespace-two-rules-disagree",
        lambda c: _replace(
            c / "fleet.yaml", "      profile: ingress-class=internal", "      namespace: back-office"
        ),
        "error",
        "fleet.yaml: spec.targets[0] and spec.targets[2]",
    ),
    Case(
        "selection-undeclared-value",
        lambda c: _replace(
            c / "fleet.yaml", "profile: ingress-class=internal", "profile: ingress-class=nope"
        ),
        "fails",
        "profile.unknown_value",
    ),
    Case(
        "selection-undeclared-profile",
        lambda c: _replace(c / "fleet.yaml", "profile: ingress-class=internal", "profile: colour=internal"),
        "fails",
        "profile.unknown_profile",
    ),
    Case(
        "multidoc-app",
        _append("applications/search/app.yaml", "---\nkind: Secret\n"),
        "warning",
        "applications/search/app.yaml: holds more than one YAML document",
    ),
    Case(
        "multidoc-cluster",
        _append("clusters/prod-nginx.yaml", "---\nkind: Secret\n"),
        "warning",
        "clusters/prod-nginx.yaml: holds more than one YAML document",
    ),
    Case(
        "multidoc-fleet",
        _append("fleet.yaml", "---\nkind: Fleet\n"),
        "warning",
        "fleet.yaml: holds more than one YAML document",
    ),
    Case(
        "strict-unread-cluster-yml",
        _write("clusters/prod-extra.yml", "kind: ClusterProfile\n"),
        "error",
        "clusters/prod-extra.yml: not read",
        ("--strict",),
    ),
]
OUTCOMES = ("error", "fails", "warning", "renders")


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BOUND, MEMORY_BOUND))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One farm home for every case: the targets a case does not touch are cache hits."""
    return tmp_path_factory.mktemp("hostile-home")


def farm_run(catalog: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env.update({"FARM_HOME": str(home), "FARM_DAEMON": "off"})
    return subprocess.run(
        [sys.executable, "-m", "farm", "run", str(catalog), "--json", "--processes", "1", *extra],
        capture_output=True,
        text=True,
        timeout=TIME_BOUND,
        env=env,
        preexec_fn=_bounded,
    )


def _nothing_read_outside(result: subprocess.CompletedProcess[str], home: Path, secret: str) -> None:
    assert secret not in result.stdout and secret not in result.stderr
    for path in home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_the_catalog_corpus_covers_every_outcome_and_class() -> None:
    assert {case.outcome for case in CASES} == set(OUTCOMES)
    assert len({case.id for case in CASES}) == len(CASES) >= 25


@pytest.mark.timeout(TIME_BOUND + 30)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_hostile_catalog_ends_cleanly_and_reads_only_itself(case: Case, home: Path, tmp_path: Path) -> None:
    catalog = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, catalog)
    case.edit(catalog)
    result = farm_run(catalog, home, *case.extra)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    _nothing_read_outside(result, home, marker(catalog))
    lines = result.stderr.splitlines()
    if case.outcome == "error":
        assert result.returncode == 1 and result.stdout == "", result.stderr[-2000:]
        assert lines and all(line.startswith("Error: ") for line in lines), result.stderr[-2000:]
        assert lines[0].startswith(f"Error: {case.expect}"), lines[0][:500]
        return
    summary = json.loads(result.stdout)
    rendered = summary["counts"]["succeeded"] + summary["counts"]["cached"]
    if case.outcome == "fails":
        assert result.returncode == 1 and list(summary["failures"]) == [case.expect], result.stdout[:2000]
        assert all(len(f["message"]) < 4100 for f in summary["failures"][case.expect])
        assert rendered >= 15
    else:
        assert result.returncode == 0 and summary["failures"] == {}, result.stdout[:2000]
        assert rendered == 31
        if case.outcome == "warning":
            assert any(line.startswith(f"warning: {case.expect}") for line in lines), result.stderr[-2000:]
