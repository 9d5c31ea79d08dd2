"""An output's provenance and signature status, through the farm's own verification."""

from __future__ import annotations

from conftest_store import tamper_evidence
from fastapi.testclient import TestClient
from sqlalchemy import select

from api.conftest import FinishedRun
from farm.store.models import EvidenceEnvelope


def _output_digest(client: TestClient, run_id: str) -> str:
    target = client.get(
        f"/api/runs/{run_id}/targets", params={"application": "app-0", "cluster": "cluster-a"}
    ).json()[0]
    return target["output_digest"]


def test_an_outputs_evidence_is_valid_and_names_its_target_and_snapshot(
    client: TestClient, finished_run: FinishedRun
) -> None:
    digest = _output_digest(client, finished_run.run_id)
    body = client.get(f"/api/outputs/{digest}/evidence").json()
    assert body["signature"] == "valid" and body["failures"] == []
    statement = body["provenance"][0]["statement"]
    assert (statement["application"], statement["cluster"]) == ("app-0", "cluster-a")
    with finished_run.env.storage.sessions() as session:
        from farm.store.models import FleetRun

        snapshot = session.get(FleetRun, finished_run.run_id).snapshot_digest
    assert statement["catalog_snapshot"] == snapshot
    assert body["size"] > 0


def test_a_tampered_envelope_makes_the_signature_invalid_with_the_reason(
    client: TestClient, finished_run: FinishedRun
) -> None:
    digest = _output_digest(client, finished_run.run_id)
    envelope = client.get(f"/api/outputs/{digest}/evidence").json()["provenance"][0]["envelope_digest"]
    sessions = finished_run.env.storage.sessions
    with sessions() as session:
        stored = session.scalar(select(EvidenceEnvelope.envelope).where(EvidenceEnvelope.digest == envelope))
    assert stored is not None  # the batch envelope of the output's job
    tamper_evidence(
        sessions,
        "UPDATE evidence_envelopes SET envelope = :data WHERE digest = :digest",
        {"data": stored.replace(b'"sig"', b'"sig" '), "digest": envelope},
    )
    body = client.get(f"/api/outputs/{digest}/evidence").json()
    assert body["signature"] == "invalid"
    assert body["failures"][0]["code"] == "envelope.corrupt" and envelope in body["failures"][0]["message"]
    page = client.get(f"/outputs/{digest}").text
    assert 'class="signature invalid"' in page and "envelope.corrupt" in page


def test_the_output_page_shows_a_valid_signature_and_the_provenance(
    client: TestClient, finished_run: FinishedRun
) -> None:
    digest = _output_digest(client, finished_run.run_id)
    page = client.get(f"/outputs/{digest}").text
    assert 'class="signature valid"' in page and "catalog_snapshot" in page and "app-0" in page


def test_the_evidence_of_an_unknown_output_is_404_and_unknown_parameters_422(client: TestClient) -> None:
    unknown = client.get("/api/outputs/" + "0" * 64 + "/evidence")
    assert unknown.status_code == 404 and unknown.json()["error"]["status"] == 404
    assert client.get("/api/outputs/x/evidence", params={"verbose": 1}).status_code == 422
