"""``farm publish RUN --to git URL`` on a bare repository in tmp: the files, the commits, the gate,
a refused push resumed with ``--retry``, and a clone verified by an independent DSSE verifier."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
from pathlib import Path

import pytest
from securesystemslib.signer import Key, Signature
from sqlalchemy import create_engine, text
from stored_blobs import overwrite_blob

from farm.publish.errors import scrub
from publish.conftest import Farm, clone, commits, git

APPS = ("app-0", "app-1", "app-2")
CLUSTERS = ("cluster-a", "cluster-b")


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts}


@pytest.mark.timeout(300)
def test_a_run_publishes_each_cluster_folder_with_envelopes_and_keys_in_one_commit_naming_run_snapshot_and_digests(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    run_id = farm.run()
    result = farm.publish(run_id, "--to", "git", str(bare))
    assert result["state"] == "done" and result["changed"] is True
    assert len(commits(bare)) == 1
    checkout = clone(bare, tmp_path / "clone")
    files = _files(checkout)
    for cluster in CLUSTERS:
        for app in APPS:
            assert f"clusters/{cluster}/{app}.yaml" in files
            assert f"clusters/{cluster}/{app}.intoto.json" in files
            published = (checkout / f"clusters/{cluster}/{app}.yaml").read_bytes()
            assert published == farm("output", f"{app}/{cluster}").encode()
    assert any(name.startswith("keys/") and name.endswith(".pub") for name in files)
    message = git(checkout, "log", "-1", "--format=%B")
    assert f"run: {run_id}" in message
    snapshot = json.loads(farm("status", run_id, "--json"))["snapshot"]
    assert f"snapshot: sha256:{snapshot}" in message
    for entry in result["clusters"]:
        for output in entry["outputs"]:
            assert f"{entry['cluster']}/{output['application']}.yaml: sha256:{output['digest']}" in message


@pytest.mark.timeout(300)
def test_publishing_the_same_run_again_or_a_run_with_the_same_outputs_makes_no_commit(
    farm: Farm, bare: Path
) -> None:
    run_id = farm.run()
    first = farm.publish(run_id, "--to", "git", str(bare))
    again = farm.publish(run_id, "--to", "git", str(bare))
    assert commits(bare) == [first["reference"]["main"]]
    assert again["state"] == "done" and again["changed"] is False
    assert again["reference"] == first["reference"]
    unchanged_run = farm.publish(farm.run(), "--to", "git", str(bare))  # a new run, the same outputs
    assert unchanged_run["changed"] is False and len(commits(bare)) == 1


@pytest.mark.timeout(300)
def test_a_changed_application_makes_one_commit_touching_only_its_files(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare))
    farm.catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    second = farm.publish(farm.run(), "--to", "git", str(bare))
    assert second["changed"] is True
    assert len(commits(bare)) == 2
    touched = git(bare, "diff", "--name-only", "main~1", "main").split()
    assert sorted(touched) == sorted(
        f"clusters/{cluster}/app-1.{suffix}" for cluster in CLUSTERS for suffix in ("yaml", "intoto.json")
    )


@pytest.mark.timeout(300)
def test_a_removed_target_has_its_files_removed(farm: Farm, bare: Path, tmp_path: Path) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare))
    for path in sorted((farm.catalog.root / "applications" / "app-2").iterdir()):
        path.unlink()
    (farm.catalog.root / "applications" / "app-2").rmdir()
    farm.publish(farm.run(), "--to", "git", str(bare))
    files = _files(clone(bare, tmp_path / "clone"))
    assert not any("app-2" in name for name in files)
    assert "clusters/cluster-a/app-1.yaml" in files


@pytest.mark.timeout(300)
def test_the_folder_of_a_cluster_the_catalog_no_longer_has_is_removed(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare))
    (farm.catalog.root / "clusters" / "cluster-b.yaml").unlink()
    farm.publish(farm.run(), "--to", "git", str(bare))
    files = _files(clone(bare, tmp_path / "clone"))
    assert not any(name.startswith("clusters/cluster-b/") for name in files)
    assert "clusters/cluster-a/app-0.yaml" in files


@pytest.mark.timeout(300)
def test_the_qualified_gate_publishes_a_qualified_cluster_and_skips_an_unqualified_one_with_the_reason(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    run_id = farm.run()
    farm("qualify", str(farm.catalog.root), "cluster-a", "--executor", "local")
    result = farm.publish(run_id, "--to", "git", str(bare), "--require", "qualified")
    decisions = {entry["cluster"]: entry for entry in result["clusters"]}
    assert decisions["cluster-a"]["published"] is True
    assert decisions["cluster-b"]["published"] is False
    assert "cluster-b is unqualified" in decisions["cluster-b"]["reason"]
    files = _files(clone(bare, tmp_path / "clone"))
    assert "clusters/cluster-a/app-0.yaml" in files
    assert not any(name.startswith("clusters/cluster-b/") for name in files)
    assert "skipped cluster-b: not qualified" in git(bare, "log", "-1", "--format=%B", "main")


def _refuse_pushes(bare: Path) -> Path:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are frozen' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    return hook


@pytest.mark.timeout(300)
def test_a_refused_push_is_retried_recorded_failed_and_resumed_by_publish_retry(
    farm: Farm, bare: Path
) -> None:
    run_id = farm.run()
    hook = _refuse_pushes(bare)
    failed = farm.publish(run_id, "--to", "git", str(bare), status=1, FARM_PUBLISH_ATTEMPTS="2")
    assert failed["state"] == "failed"
    assert "pushes are frozen" in failed["error"]
    assert commits(bare) == []
    hook.unlink()
    resumed = json.loads(farm("publish", "--retry", "--json").splitlines()[0])
    assert resumed["publish"] == failed["publish"]
    assert resumed["state"] == "done" and resumed["changed"] is True
    assert len(commits(bare)) == 1
    assert farm("publish", "--retry", "--json") == ""  # nothing is left to resume


@pytest.mark.timeout(300)
def test_a_published_clone_verifies_with_securesystemslib_and_the_published_public_key(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare))
    checkout = clone(bare, tmp_path / "clone")
    keys = {}
    for pem in (checkout / "keys").glob("*.pub"):
        key = Key.from_dict(
            pem.stem,
            {"keytype": "ed25519", "scheme": "ed25519", "keyval": {"public": _raw_hex(pem.read_bytes())}},
        )
        keys[pem.stem] = key
    checked = 0
    for envelope_path in checkout.glob("clusters/*/*.intoto.json"):
        envelope = json.loads(envelope_path.read_bytes())
        payload = base64.b64decode(envelope["payload"])
        pae = _pae(envelope["payloadType"], payload)
        (signature,) = envelope["signatures"]
        keys[signature["keyid"]].verify_signature(
            Signature(signature["keyid"], base64.b64decode(signature["sig"]).hex()), pae
        )
        statement = json.loads(payload)
        manifests = envelope_path.with_name(envelope_path.name.replace(".intoto.json", ".yaml")).read_bytes()
        application, cluster = envelope_path.name.removesuffix(".intoto.json"), envelope_path.parent.name
        named = {subject["name"]: subject["digest"]["sha256"] for subject in statement["subject"]}
        assert named[f"render:{application}/{cluster}"] == hashlib.sha256(manifests).hexdigest()
        checked += 1
    assert checked == len(APPS) * len(CLUSTERS)


def _pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding, written here from the DSSE specification."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def _raw_hex(pem: bytes) -> str:
    from cryptography.hazmat.primitives import serialization

    public = serialization.load_pem_public_key(pem)
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


@pytest.mark.timeout(300)
def test_farm_verify_all_checks_publish_records_and_reports_a_row_that_restates_another_commit(
    farm: Farm, bare: Path, database_url: str
) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare))
    assert "1 publish record(s) checked" in farm("verify", "--all")
    engine = create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text('UPDATE publishes SET reference = \'{"main":"0000"}\''))
    engine.dispose()
    output = farm("verify", "--all", status=1)
    assert "FAIL publish.row_mismatch: publish 1" in output or "FAIL publish.row_mismatch" in output


@pytest.mark.timeout(300)
def test_farm_verify_all_reports_a_publish_row_whose_branch_or_layout_is_not_the_signed_one(
    farm: Farm, bare: Path, database_url: str
) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare))
    engine = create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(
            text('UPDATE publishes SET options = \'{"branch":"other","layout":"folders","require":"none"}\'')
        )
    engine.dispose()
    output = farm("verify", "--all", status=1)
    assert "FAIL publish.row_mismatch: publish " in output  # its id: PostgreSQL's sequence goes on
    assert "destination (with its layout and branch)" in output


@pytest.mark.timeout(300)
def test_credentials_in_the_destination_url_are_refused_and_neither_recorded_nor_shown(
    farm: Farm, database_url: str
) -> None:
    run_id = farm.run()
    output = farm("publish", run_id, "--to", "git", "https://bot:s3cret@git.example/fleet.git", status=1)
    assert "s3cret" not in output
    assert "Error: https://bot:***@git.example/fleet.git: credentials in the URL" in output
    output = farm("publish", run_id, "--to", "git", "https://ghp_t0ken@git.example/fleet.git", status=1)
    assert "ghp_t0ken" not in output and "https://***@git.example/fleet.git" in output
    engine = create_engine(database_url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM publishes")).scalar() == 0
    engine.dispose()


def test_a_message_shows_no_credentials_of_any_url_in_it() -> None:
    message = "fatal: unable to access 'https://bot:s3cret@git.example/x.git/' and http://t0ken@h/y"
    assert scrub(message) == "fatal: unable to access 'https://bot:***@git.example/x.git/' and http://***@h/y"
    assert (
        scrub("ssh://git@host/fleet.git and git@host:fleet.git")
        == "ssh://***@host/fleet.git and git@host:fleet.git"
    )


@pytest.mark.timeout(300)
def test_a_cluster_with_a_failed_target_is_skipped_with_the_reason_and_keeps_what_it_had(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare))
    farm.catalog.break_app("app-1")
    run_id = _run_allowing_failures(farm)
    result = farm.publish(run_id, "--to", "git", str(bare))
    decisions = {entry["cluster"]: entry for entry in result["clusters"]}
    assert not decisions["cluster-a"]["published"]
    assert "app-1 (" in decisions["cluster-a"]["reason"]
    assert result["changed"] is False  # every cluster skipped: the published files stay
    files = _files(clone(bare, tmp_path / "clone"))
    assert "clusters/cluster-a/app-1.yaml" in files


@pytest.mark.timeout(300)
def test_a_tampered_output_blob_fails_the_publish_and_publishes_nothing(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    run_id = farm.run()
    verified = farm("verify", "--run", run_id)
    digest = next(line.split()[-1] for line in verified.splitlines() if line.startswith("ok   output"))
    overwrite_blob(tmp_path / "objects", digest, b"kind: Secret\n")
    failed = farm.publish(run_id, "--to", "git", str(bare), status=1)
    assert failed["state"] == "failed" and failed["error"].startswith("publish.run")
    assert digest in failed["error"]
    assert commits(bare) == []


def _run_allowing_failures(farm: Farm) -> str:
    output = farm("run", str(farm.catalog.root), "--json", status=1)
    return json.loads(output.splitlines()[-1])["run_id"]


@pytest.mark.timeout(300)
def test_a_cluster_whose_evidence_is_no_longer_current_is_skipped_by_the_qualified_gate(
    farm: Farm, bare: Path
) -> None:
    farm.run()
    farm("qualify", str(farm.catalog.root), "--executor", "local")
    farm.catalog.write_cluster("cluster-b", ingress_class="traefik")  # its evidence is now stale
    result = farm.publish(farm.run(), "--to", "git", str(bare), "--require", "qualified")
    decisions = {entry["cluster"]: entry for entry in result["clusters"]}
    assert decisions["cluster-a"]["published"] is True
    assert decisions["cluster-b"]["published"] is False
    assert "cluster-b is stale" in decisions["cluster-b"]["reason"]


@pytest.mark.timeout(300)
def test_the_branches_layout_writes_one_branch_per_cluster_with_its_outputs_at_the_root(
    farm: Farm, bare: Path, tmp_path: Path
) -> None:
    farm.publish(farm.run(), "--to", "git", str(bare), "--layout", "branches")
    for cluster in CLUSTERS:
        files = _files(clone(bare, tmp_path / cluster, branch=f"main-{cluster}"))
        assert {f"{app}.yaml" for app in APPS} <= files
        assert {f"{app}.intoto.json" for app in APPS} <= files
        assert any(name.startswith("keys/") for name in files)


@pytest.mark.timeout(300)
def test_farm_publish_to_makes_a_completed_local_run_publish_through_its_after_run_step(
    farm: Farm, bare: Path
) -> None:
    run_id = farm.run(FARM_PUBLISH_TO=f"git {bare}")
    assert len(commits(bare)) == 1
    assert f"run: {run_id}" in git(bare, "log", "-1", "--format=%B", "main")
