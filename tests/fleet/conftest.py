"""Fixtures for fleet runs: a small catalog written here, and farm settings on a fresh database."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from chart_repository import ChartRepository

from farm.build.bounded import stop_render_children
from farm.evidence.keys import Signer, load_configured_signer
from farm.settings import FarmSettings, load_settings
from farm.store.context import Storage, open_storage

APP = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: shop
spec:
  components:
    - name: {name}
      type: webservice
      properties:
        image: {image}
        port: 8080
      traits:
        - type: expose
          properties:
            hostnames: ["{name}.example.com"]
"""

PROFILE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: {name}
spec:
  capabilities:
    expose:
      rendering:
        controllerType: ingress
        ingressClassName: {ingress_class}
"""

FLEET = """apiVersion: farm.dev/v1alpha1
kind: Fleet
metadata:
  name: test-fleet
spec:
  applications: applications
  clusters: clusters
  targets:
    - applications: ["*"]
      clusters: ["*"]
      exclude: [{application: "app-0", cluster: "cluster-c"}]
"""


@dataclass
class Catalog:
    root: Path

    def write_app(self, name: str, image: str = "ghcr.io/example/app:v1.0.0") -> None:
        folder = self.root / "applications" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "app.yaml").write_text(APP.format(name=name, image=image))

    def write_cluster(self, name: str, ingress_class: str = "nginx") -> None:
        (self.root / "clusters").mkdir(parents=True, exist_ok=True)
        (self.root / "clusters" / f"{name}.yaml").write_text(
            PROFILE.format(name=name, ingress_class=ingress_class)
        )

    def break_app(self, name: str) -> None:
        self.write_app(name, image="ghcr.io/example/app")  # no tag: the core refuses it


def make_catalog(
    root: Path, apps: int = 4, clusters: tuple[str, ...] = ("cluster-a", "cluster-b", "cluster-c")
) -> Catalog:
    catalog = Catalog(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "fleet.yaml").write_text(FLEET)
    for index in range(apps):
        catalog.write_app(f"app-{index}")
    for name in clusters:
        catalog.write_cluster(name)
    return catalog


@pytest.fixture(autouse=True)
def fresh_render_children() -> Iterator[None]:
    """Renders run in a child process forked on first use; each test starts its own, so what a
    test patches into the render before it renders is what its child runs."""
    stop_render_children()
    yield
    stop_render_children()


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return make_catalog(tmp_path / "catalog")


@dataclass
class FleetEnv:
    settings: FarmSettings
    storage: Storage
    signer: Signer

    def environ(self) -> dict[str, str]:
        return {
            "FARM_HOME": str(self.settings.home),
            "FARM_DATABASE_URL": self.settings.database_url,
            "FARM_OBJECT_STORE": self.settings.object_store,
        }


def open_fleet_env(tmp_path: Path, database_url: str, objects: Path) -> FleetEnv:
    """Farm settings on a fresh migrated database, blobs in the folder ``objects``; the caller
    closes ``storage``."""
    settings = load_settings(home=tmp_path / "farm", database_url=database_url, object_store=str(objects))
    storage = open_storage(settings)
    return FleetEnv(settings, storage, load_configured_signer(settings))


@pytest.fixture
def fleet_env(tmp_path: Path, database_url: str) -> Iterator[FleetEnv]:
    """Farm settings on a fresh migrated database (SQLite and PostgreSQL, via ``database_url``)."""
    env = open_fleet_env(tmp_path, database_url, tmp_path / "objects")
    yield env
    env.storage.close()


HELM_APP = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: shop
spec:
  components:
    - name: {name}
      type: helm
      properties:
        delivery: template
        chart: web
        version: 1.2.0
        source:
          url: {url}
        values:
          image: ghcr.io/example/web:1.2.0
"""
HELM_CHART = {
    "values.yaml": "replicas: 2\n",
    "templates/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec:
      containers:
        - name: web
          image: {{ .Values.image }}
""",
}
HELM_STANDIN = Path(__file__).resolve().parent.parent / "helm_standin.py"


def write_helm_app(catalog: Catalog, name: str, url: str) -> None:
    """A helm ``delivery: template`` application in the catalog, its chart (web 1.2.0) in the
    repository at ``url``."""
    folder = catalog.root / "applications" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.yaml").write_text(HELM_APP.format(name=name, url=url))


@pytest.fixture
def chart_repository(tmp_path: Path) -> Iterator[ChartRepository]:
    """A chart repository served on loopback, holding web 1.2.0 (``HELM_CHART``)."""
    repository = ChartRepository(tmp_path / "chart-repository")
    repository.publish("web", "1.2.0", HELM_CHART)
    yield repository
    repository.stop()


def helm_environment(root: Path, version: str | None = None) -> dict[str, str]:
    """PATH and stand-in settings for a process that renders charts: the stand-in as ``helm``
    first on PATH (``helm version --short`` says ``version`` when given), logging its argv."""
    bin_dir = root / (f"helm-bin-{version}" if version else "helm-bin")
    bin_dir.mkdir(parents=True, exist_ok=True)
    helm = bin_dir / "helm"
    if version:
        helm.write_text(
            f'#!/bin/sh\nHELM_STANDIN_VERSION={version} exec {sys.executable} {HELM_STANDIN} "$@"\n'
        )
    else:
        helm.write_text(f"#!{sys.executable}\n" + HELM_STANDIN.read_text())
    helm.chmod(0o755)
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HELM_STANDIN_LOG": str(root / "helm-argv.jsonl"),
    }


def helm_runs(environment: dict[str, str], command: str = "template") -> list[list[str]]:
    """The argv of each ``helm COMMAND`` the stand-in of ``environment`` ran."""
    log = Path(environment["HELM_STANDIN_LOG"])
    runs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [argv for argv in runs if argv[:1] == [command]]


def no_helm_environment(root: Path) -> dict[str, str]:
    """PATH of a process with no helm binary: an empty folder beside the interpreter's own."""
    empty = root / "no-helm-bin"
    empty.mkdir(parents=True, exist_ok=True)
    return {"PATH": f"{empty}{os.pathsep}{Path(sys.executable).parent}"}


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of its own (the tests run as root), unmounted afterwards."""
    folder = tmp_path / "small-objects"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill_filesystem(folder: Path) -> None:
    """Write until the filesystem says ENOSPC."""
    with open(folder / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC
