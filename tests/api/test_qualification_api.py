"""The qualification board, a subject's timeline and the trigger, on the shipped examples/fleet."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from api.conftest import QUALIFIED_SUBJECT, TOKEN, ExampleFleet

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _subject(client: TestClient, cluster: str, selection: str) -> dict:
    return next(
        s
        for s in client.get("/api/qualification").json()
        if (s["cluster"], s["selection"]) == (cluster, selection)
    )


def test_the_board_lists_the_qualified_subject_with_state_reason_and_since(
    example_client: TestClient,
) -> None:
    subject = _subject(example_client, *QUALIFIED_SUBJECT)
    assert subject["state"] == "qualified" and subject["reason"] == ""
    assert subject["since"] and subject["current_evidence_id"] is not None


def test_a_subjects_timeline_has_its_run_its_current_evidence_and_its_transitions(
    example_client: TestClient,
) -> None:
    subject = _subject(example_client, *QUALIFIED_SUBJECT)
    body = example_client.get(f"/api/qualification/{subject['id']}").json()
    assert body["subject"]["id"] == subject["id"]
    kinds = [entry["kind"] for entry in body["entries"]]
    assert kinds.count("run") == 1 and kinds.count("evidence") == 1
    evidence = next(entry for entry in body["entries"] if entry["kind"] == "evidence")
    assert evidence["current"] and evidence["run_id"] and len(evidence["envelope_digest"]) == 64
    transitions = [entry["summary"] for entry in body["entries"] if entry["kind"] == "transition"]
    assert transitions[-1].startswith("qualifying → qualified")


def test_an_unknown_subject_is_404_and_a_malformed_id_422(example_client: TestClient) -> None:
    response = example_client.get("/api/qualification/999999")
    assert response.status_code == 404 and "999999" in response.json()["error"]["detail"]
    assert example_client.get("/api/qualification/nope").status_code == 422
    assert example_client.get("/api/qualification", params={"stat": "stale"}).status_code == 422


def test_triggering_a_qualification_needs_the_bearer_token(example_client: TestClient) -> None:
    body = {"catalog": "example", "subjects": ["staging-traefik"]}
    assert example_client.post("/api/qualification", json=body).status_code == 401
    wrong = example_client.post("/api/qualification", json=body, headers={"Authorization": "Bearer no"})
    assert wrong.status_code == 401 and wrong.json()["error"]["status"] == 401


def test_a_trigger_names_a_configured_catalog_and_known_subjects_only(example_client: TestClient) -> None:
    post = example_client.post
    assert post("/api/qualification", json={"catalog": "/etc"}, headers=AUTH).status_code == 404
    unknown = post("/api/qualification", json={"catalog": "example", "subjects": ["nowhere"]}, headers=AUTH)
    assert unknown.status_code == 404 and "nowhere" in unknown.json()["error"]["detail"]
    extra = post("/api/qualification", json={"catalog": "example", "path": "/etc"}, headers=AUTH)
    assert extra.status_code == 422


@pytest.mark.timeout(120)
def test_a_triggered_qualification_qualifies_the_subject_in_the_background(
    example_client: TestClient, example_fleet: ExampleFleet
) -> None:
    response = example_client.post(
        "/api/qualification", json={"catalog": "example", "subjects": ["staging-traefik"]}, headers=AUTH
    )
    assert response.status_code == 202 and response.json()["subjects"] == ["staging-traefik"]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        states = {
            (s["cluster"], s["selection"]): s["state"]
            for s in example_client.get("/api/qualification").json()
        }
        if states.get(("staging-traefik", "")) == "qualified":
            break
        time.sleep(0.3)
    assert states.get(("staging-traefik", "")) == "qualified"


@pytest.mark.timeout(120)
def test_a_subject_named_twice_in_a_trigger_is_qualified_once(
    example_client: TestClient, example_fleet: ExampleFleet
) -> None:
    before = {run["id"] for run in example_client.get("/api/runs", params={"limit": 200}).json()["runs"]}
    named = ["staging-traefik", "prod-gateway", "staging-traefik", "staging-traefik"]
    response = example_client.post(
        "/api/qualification", json={"catalog": "example", "subjects": named}, headers=AUTH
    )
    assert response.status_code == 202
    assert response.json()["subjects"] == ["staging-traefik", "prod-gateway"]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        states = {s["subject"]: s["state"] for s in example_client.get("/api/qualification").json()}
        if states.get("staging-traefik") == states.get("prod-gateway") == "qualified":
            break
        time.sleep(0.3)
    time.sleep(1)  # a third run, were there one, would follow the second at once
    runs = example_client.get("/api/runs", params={"limit": 200}).json()["runs"]
    assert len([run for run in runs if run["id"] not in before and run["kind"] == "qualification"]) == 2


def test_the_board_page_groups_subjects_by_state_and_links_the_timeline(example_client: TestClient) -> None:
    page = example_client.get("/qualification").text
    subject = _subject(example_client, *QUALIFIED_SUBJECT)
    assert 'data-state="qualified"' in page and f'href="/qualification/{subject["id"]}"' in page
    timeline = example_client.get(f"/qualification/{subject['id']}").text
    assert "current evidence" in timeline and "ingress-class=public" in timeline
    assert 'href="/qualification"' in example_client.get("/").text
    assert example_client.get("/qualification/999999", headers={"accept": "text/html"}).status_code == 404


def _wait_for_state(client: TestClient, subject: tuple[str, str], state: str) -> str:
    deadline = time.monotonic() + 90
    seen = ""
    while time.monotonic() < deadline:
        seen = _subject(client, *subject)["state"]
        if seen == state:
            break
        time.sleep(0.3)
    return seen


def test_a_run_triggered_through_the_api_applies_qualification_on_run(
    example_client: TestClient, example_fleet: ExampleFleet
) -> None:
    """An API-triggered run goes through the fleet-run owner, after-run steps included: after a
    ClusterProfile edit, its qualified subject goes stale (FARM_QUALIFICATION_ON_RUN=stale)."""
    assert _subject(example_client, *QUALIFIED_SUBJECT)["state"] == "qualified"
    cluster = example_fleet.root / "clusters" / f"{QUALIFIED_SUBJECT[0]}.yaml"
    cluster.write_text(cluster.read_text().replace("letsencrypt-prod", "letsencrypt-other"))

    response = example_client.post("/api/runs", json={"catalog": "example"}, headers=AUTH)
    assert response.status_code == 202, response.text
    assert _wait_for_state(example_client, QUALIFIED_SUBJECT, "stale") == "stale"
    runs = example_client.get("/api/runs").json()["runs"]
    assert (runs[0]["kind"], runs[0]["trigger"], runs[0]["fleet"]) == ("fleet", "api", "example")


def test_subjects_are_written_cluster_colon_profile_equals_value_on_the_board_and_in_a_trigger(
    example_client: TestClient,
) -> None:
    subject = f"{QUALIFIED_SUBJECT[0]}:{QUALIFIED_SUBJECT[1]}"
    assert subject in {s["subject"] for s in example_client.get("/api/qualification").json()}
    accepted = example_client.post(
        "/api/qualification", json={"catalog": "example", "subjects": [subject]}, headers=AUTH
    )
    assert accepted.status_code == 202 and accepted.json()["subjects"] == [subject]
    old_form = example_client.post(
        "/api/qualification",
        json={"catalog": "example", "subjects": ["prod-nginx:profile=ingress-class=public"]},
        headers=AUTH,
    )
    assert old_form.status_code == 422


@pytest.mark.timeout(180)
def test_the_timeline_of_a_subject_gone_stale_names_the_document_and_key_that_drifted(
    example_client: TestClient, example_fleet: ExampleFleet
) -> None:
    cluster = example_fleet.root / "clusters" / f"{QUALIFIED_SUBJECT[0]}.yaml"
    cluster.write_text(cluster.read_text().replace("letsencrypt-prod", "letsencrypt-other"))
    response = example_client.post("/api/runs", json={"catalog": "example"}, headers=AUTH)
    assert response.status_code == 202, response.text
    assert _wait_for_state(example_client, QUALIFIED_SUBJECT, "stale") == "stale"
    subject_id = _subject(example_client, *QUALIFIED_SUBJECT)["id"]
    entries = example_client.get(f"/api/qualification/{subject_id}").json()["entries"]
    [stale] = [e for e in entries if e["kind"] == "transition" and "→ stale" in e["summary"]]
    assert stale["drift"] == [
        {
            "path": f"clusters/{QUALIFIED_SUBJECT[0]}.yaml",
            "kind": "changed",
            "keys": [
                {
                    "path": "spec.capabilities.certificate.rendering.issuerRef.name",
                    "kind": "changed",
                    "old": "letsencrypt-prod",
                    "new": "letsencrypt-other",
                }
            ],
        }
    ]
    page = example_client.get(f"/qualification/{subject_id}").text
    assert '<code>"letsencrypt-prod"</code> → <code>"letsencrypt-other"</code>' in page
