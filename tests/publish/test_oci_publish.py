"""``farm publish RUN --to oci REGISTRY/REPO`` against Debian's docker-registry on loopback: one
Flux artifact per cluster tagged with the run id, its envelopes attached as an OCI 1.1 referrer."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from farm.publish.service import publishes_of
from farm.settings import load_settings
from farm.store.context import open_storage
from publish.conftest import Farm, free_port, start_registry

MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def _manifest(registry: str, repository: str, reference: str) -> tuple[str, dict]:
    response = httpx.get(
        f"http://{registry}/v2/{repository}/manifests/{reference}", headers={"Accept": MANIFEST}
    )
    response.raise_for_status()
    return response.headers["Docker-Content-Digest"], response.json()


def _blob(registry: str, repository: str, digest: str) -> bytes:
    response = httpx.get(f"http://{registry}/v2/{repository}/blobs/{digest}", follow_redirects=True)
    response.raise_for_status()
    assert "sha256:" + hashlib.sha256(response.content).hexdigest() == digest
    return response.content


def _layer_files(layer: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(layer))) as archive:
        return {member.name: archive.extractfile(member).read() for member in archive.getmembers()}


def _tags(registry: str, repository: str) -> list[str]:
    return httpx.get(f"http://{registry}/v2/{repository}/tags/list").json()["tags"]


@pytest.mark.timeout(300)
def test_an_oci_publish_pushes_a_flux_artifact_per_cluster_tagged_with_the_run_id_with_its_envelopes_as_a_referrer(
    farm: Farm, registry: str
) -> None:
    run_id = farm.run()
    result = farm.publish(run_id, "--to", "oci", f"{registry}/fleet-one")
    assert result["state"] == "done" and result["changed"] is True
    for cluster in ("cluster-a", "cluster-b"):
        repository = f"fleet-one/{cluster}"
        digest, manifest = _manifest(registry, repository, run_id)
        assert result["reference"][cluster] == f"{registry}/{repository}@{digest}"
        assert manifest["config"]["mediaType"] == "application/vnd.cncf.flux.config.v1+json"
        (layer,) = manifest["layers"]
        assert layer["mediaType"] == "application/vnd.cncf.flux.content.v1.tar+gzip"
        files = _layer_files(_blob(registry, repository, layer["digest"]))
        assert sorted(files) == ["app-0.yaml", "app-1.yaml", "app-2.yaml"]
        for name, data in files.items():
            assert data == farm("output", f"{name.removesuffix('.yaml')}/{cluster}").encode()
        _, referrer = _manifest(registry, repository, digest.replace(":", "-"))
        assert referrer["subject"]["digest"] == digest
        titles = {
            entry["annotations"]["org.opencontainers.image.title"]: entry for entry in referrer["layers"]
        }
        for name, data in files.items():
            envelope_digest = titles[name.replace(".yaml", ".intoto.json")]["digest"]
            envelope = json.loads(_blob(registry, repository, envelope_digest))
            statement = json.loads(base64.b64decode(envelope["payload"]))
            named = {subject["name"]: subject["digest"]["sha256"] for subject in statement["subject"]}
            assert named[f"render:{name.removesuffix('.yaml')}/{cluster}"] == hashlib.sha256(data).hexdigest()
        assert any(title.startswith("keys/") for title in titles)


@pytest.mark.timeout(300)
def test_publishing_the_same_run_to_oci_again_pushes_no_new_manifest(farm: Farm, registry: str) -> None:
    run_id = farm.run()
    first = farm.publish(run_id, "--to", "oci", f"{registry}/fleet-two")
    tags = _tags(registry, "fleet-two/cluster-a")
    again = farm.publish(run_id, "--to", "oci", f"{registry}/fleet-two")
    assert again["changed"] is False
    assert again["reference"] == first["reference"]
    assert _tags(registry, "fleet-two/cluster-a") == tags


@pytest.mark.timeout(300)
def test_an_unreachable_registry_leaves_the_publish_failed_until_retry_pushes_it(
    farm: Farm, tmp_path: Path
) -> None:
    run_id = farm.run()
    port = free_port()
    failed = farm.publish(
        run_id, "--to", "oci", f"127.0.0.1:{port}/fleet", status=1, FARM_PUBLISH_ATTEMPTS="1"
    )
    assert failed["state"] == "failed" and "ConnectError" in failed["error"]
    process = start_registry(tmp_path / "late-registry", port)
    try:
        resumed = json.loads(farm("publish", "--retry", "--json").splitlines()[0])
        assert resumed["state"] == "done" and resumed["changed"] is True
        _manifest(f"127.0.0.1:{port}", "fleet/cluster-a", run_id)
    finally:
        process.terminate()
        process.wait()


USER, PASSWORD = "publisher", "pw-Zq8v1Xk3"


@pytest.fixture
def private_registry(tmp_path: Path) -> Iterator[str]:
    """A registry on loopback that takes pushes only from ``USER`` with ``PASSWORD``."""
    port = free_port()
    process = start_registry(tmp_path / "private-registry", port, users={USER: PASSWORD})
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait()


@pytest.mark.timeout(300)
def test_an_oci_publish_to_a_registry_that_requires_login_pushes_with_the_configured_user(
    farm: Farm, private_registry: str
) -> None:
    run_id = farm.run()
    result = farm.publish(
        run_id,
        "--to",
        "oci",
        f"{private_registry}/fleet",
        FARM_PUBLISH_OCI_USERNAME=USER,
        FARM_PUBLISH_OCI_PASSWORD=PASSWORD,
    )
    assert result["state"] == "done" and result["changed"] is True
    response = httpx.get(
        f"http://{private_registry}/v2/fleet/cluster-a/manifests/{run_id}",
        headers={"Accept": MANIFEST},
        auth=(USER, PASSWORD),
    )
    assert response.status_code == 200
    assert result["reference"]["cluster-a"].endswith(response.headers["Docker-Content-Digest"])
    anonymous = httpx.get(f"http://{private_registry}/v2/fleet/cluster-a/manifests/{run_id}")
    assert anonymous.status_code == 401


@pytest.mark.timeout(300)
def test_a_wrong_registry_password_is_a_clean_failure_recorded_without_the_credential_and_not_retried(
    farm: Farm, private_registry: str
) -> None:
    run_id = farm.run()
    wrong = "wrong-" + PASSWORD
    credentials = {"FARM_PUBLISH_OCI_USERNAME": USER, "FARM_PUBLISH_OCI_PASSWORD": wrong}
    output = farm(
        "publish", run_id, "--to", "oci", f"{private_registry}/fleet", "--json", status=1, **credentials
    )
    failed = json.loads(output.splitlines()[0])
    assert failed["state"] == "failed"
    assert failed["error"] == (
        f"publish.oci_unauthorized: oci {private_registry}/fleet: the registry refused the credentials "
        "(401 Unauthorized): check FARM_PUBLISH_OCI_USERNAME and FARM_PUBLISH_OCI_PASSWORD"
    )
    assert "Traceback" not in output and wrong not in output and PASSWORD not in output
    storage = open_storage(load_settings(**_settings(farm.env)))
    try:
        (record,) = publishes_of(storage, run_id)
    finally:
        storage.close()
    assert (record["state"], record["attempts"]) == ("failed", 1)  # retrying cannot mend it
    assert wrong not in json.dumps(record) and PASSWORD not in json.dumps(record)
    credentials["FARM_PUBLISH_OCI_PASSWORD"] = PASSWORD
    resumed = json.loads(farm("publish", "--retry", "--json", **credentials))
    assert resumed["state"] == "done"


def _settings(env: dict[str, str]) -> dict[str, object]:
    return {
        "home": Path(env["FARM_HOME"]),
        "database_url": env["FARM_DATABASE_URL"],
        "object_store": env["FARM_OBJECT_STORE"],
    }
