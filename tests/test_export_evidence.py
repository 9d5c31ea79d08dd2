"""``farm export-evidence``: the files it writes verify with an independent DSSE verifier
(securesystemslib) using only the exported public key."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from fleet.conftest import fresh_render_children, make_catalog  # noqa: F401 - the fixture
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey
from typer.testing import CliRunner

from farm.cli import app as cli


@pytest.fixture
def exported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "home"))
    catalog = make_catalog(tmp_path / "catalog", apps=2, clusters=("cluster-a", "cluster-b"))
    assert CliRunner().invoke(cli, ["run", str(catalog.root), "--processes", "1"]).exit_code == 0
    result = CliRunner().invoke(cli, ["export-evidence", "app-1/cluster-b", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    return tmp_path / "out"


def independent_verify(folder: Path) -> dict:
    """securesystemslib's DSSE verification with the exported key; the in-toto statement."""
    (key_file,) = folder.glob("signer-*.pub")
    public_key = serialization.load_pem_public_key(key_file.read_bytes())
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    key = SSlibKey.from_crypto(public_key, keyid=hashlib.sha256(raw).hexdigest(), scheme="ed25519")
    envelope = Envelope.from_dict(json.loads((folder / "manifests.yaml.intoto.json").read_bytes()))
    envelope.verify([key], 1)
    assert envelope.payload_type == "application/vnd.in-toto+json"
    return json.loads(envelope.payload)


def test_exported_evidence_verifies_with_securesystemslib_and_names_the_output(exported: Path) -> None:
    statement = independent_verify(exported)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    manifests = (exported / "manifests.yaml").read_bytes()
    named = json.loads((exported / "manifests.yaml.subject.json").read_bytes())
    subject = statement["subject"][named["subjectIndex"]]
    assert subject == {"name": "render:app-1/cluster-b", "digest": named["digest"]}
    assert subject["digest"]["sha256"] == hashlib.sha256(manifests).hexdigest()
    parameters = statement["predicate"]["buildDefinition"]["externalParameters"]
    render = parameters["renders"][named["subjectIndex"]]
    assert (parameters["application"], render["clusterProfile"]) == ("app-1", "cluster-b")


def test_the_exported_batch_statement_names_every_output_of_its_job_each_by_its_target(
    exported: Path,
) -> None:
    statement = independent_verify(exported)
    names = sorted(subject["name"] for subject in statement["subject"])
    assert names == ["render:app-1/cluster-a", "render:app-1/cluster-b"]
    renders = statement["predicate"]["buildDefinition"]["externalParameters"]["renders"]
    assert [f"render:app-1/{r['clusterProfile']}" for r in renders] == [
        s["name"] for s in statement["subject"]
    ]


def test_an_exported_envelope_with_an_altered_payload_fails_the_independent_verifier(exported: Path) -> None:
    path = exported / "manifests.yaml.intoto.json"
    envelope = json.loads(path.read_bytes())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    path.write_text(json.dumps(envelope))
    with pytest.raises(VerificationError):
        independent_verify(exported)


def test_export_evidence_of_a_target_with_no_output_is_one_error_line(tmp_path: Path, exported: Path) -> None:
    result = CliRunner().invoke(cli, ["export-evidence", "app-9/cluster-a", "--out", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: no output for target app-9/cluster-a (farm run renders it)"
