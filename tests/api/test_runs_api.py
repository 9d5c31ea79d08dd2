from __future__ import annotations

import time

from fastapi.testclient import TestClient
from fleet.conftest import make_catalog

from api.conftest import TOKEN, FinishedRun
from farm.api import create_app


def test_the_runs_list_shows_the_finished_run_newest_first(
    client: TestClient, finished_run: FinishedRun
) -> None:
    body = client.get("/api/runs").json()
    assert [run["id"] for run in body["runs"]] == [finished_run.run_id]
    assert body["next_cursor"] is None


def test_the_runs_list_pages_with_a_cursor(client: TestClient, finished_run: FinishedRun) -> None:
    second = client.post(
        "/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert second.status_code == 202
    first_page = client.get("/api/runs", params={"limit": 1}).json()
    assert [run["id"] for run in first_page["runs"]] == [second.json()["run_id"]]
    next_page = client.get("/api/runs", params={"limit": 1, "cursor": first_page["next_cursor"]}).json()
    assert [run["id"] for run in next_page["runs"]] == [finished_run.run_id]
    assert next_page["next_cursor"] is None


def test_a_run_shows_its_counts_by_state(client: TestClient, finished_run: FinishedRun) -> None:
    body = client.get(f"/api/runs/{finished_run.run_id}").json()
    assert body["total"] == 6 and body["done"] == 6
    assert body["failed"] == 2 and body["counts"]["succeeded"] == 4


def test_an_unknown_run_is_404_with_an_error_body(client: TestClient) -> None:
    response = client.get("/api/runs/nope")
    assert response.status_code == 404
    assert "nope" in response.json()["error"]["detail"]
    assert client.get("/api/runs/nope/targets").status_code == 404


def test_targets_filter_by_state_application_and_cluster(
    client: TestClient, finished_run: FinishedRun
) -> None:
    failed = client.get(f"/api/runs/{finished_run.run_id}/targets", params={"state": "failed"}).json()
    assert {(t["application"], t["cluster"]) for t in failed} == {
        ("app-2", "cluster-a"),
        ("app-2", "cluster-b"),
    }
    assert all(t["error_code"] and t["error_message"] for t in failed)
    code = failed[0]["error_code"]
    by_code = client.get(f"/api/runs/{finished_run.run_id}/targets", params={"error_code": code}).json()
    assert len(by_code) == 2
    one = client.get(
        f"/api/runs/{finished_run.run_id}/targets", params={"application": "app-0", "cluster": "cluster-b"}
    ).json()
    assert [(t["application"], t["cluster"], t["state"]) for t in one] == [
        ("app-0", "cluster-b", "succeeded")
    ]


def test_a_misspelt_query_parameter_is_refused_not_ignored(
    client: TestClient, finished_run: FinishedRun
) -> None:
    response = client.get(f"/api/runs/{finished_run.run_id}/targets", params={"stat": "failed"})
    assert response.status_code == 422
    assert response.json()["error"]["detail"][0]["loc"] == ["query", "stat"]
    assert client.get("/api/runs", params={"limt": 1}).status_code == 422


def test_a_filter_holding_a_nul_character_is_a_422_naming_it_on_every_database(
    client: TestClient, finished_run: FinishedRun
) -> None:
    run = finished_run.run_id
    for path, name in (
        (f"/api/runs/{run}/targets", "application"),
        (f"/api/runs/{run}/targets", "state"),
        (f"/api/runs/{run}/targets", "error_code"),
        (f"/api/runs/{run}/grid", "cluster"),
        (f"/runs/{run}", "cluster"),
    ):
        response = client.get(path, params={name: "app-0\x00"})
        assert response.status_code == 422, (path, name, response.text)
        assert response.json()["error"]["detail"] == [
            {
                "loc": ["query", name],
                "msg": "a query value may not hold a NUL character",
                "type": "value_error",
            }
        ]


def test_a_forged_cursor_is_422(client: TestClient) -> None:
    assert client.get("/api/runs", params={"cursor": "!!!"}).status_code == 422


def test_triggering_a_run_needs_the_bearer_token(client: TestClient) -> None:
    assert client.post("/api/runs", json={"catalog": "test-fleet"}).status_code == 401
    wrong = client.post(
        "/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": "Bearer wrong"}
    )
    assert wrong.status_code == 401


def test_triggering_is_refused_when_the_server_has_no_token(finished_run: FinishedRun) -> None:
    app = create_app(finished_run.env.storage, {"test-fleet": finished_run.catalog_root}, None)
    with TestClient(app) as client:
        response = client.post(
            "/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": "Bearer x"}
        )
    assert response.status_code == 403


def test_a_trigger_names_a_configured_catalog_only_and_no_unknown_fields(client: TestClient) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/runs", json={"catalog": "/etc"}, headers=auth).status_code == 404
    extra = client.post("/api/runs", json={"catalog": "test-fleet", "path": "/etc"}, headers=auth)
    assert extra.status_code == 422


def test_a_triggered_run_finishes_in_the_background(client: TestClient) -> None:
    run_id = client.post(
        "/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": f"Bearer {TOKEN}"}
    ).json()["run_id"]
    deadline = time.monotonic() + 60
    while client.get(f"/api/runs/{run_id}").json()["done"] < 6 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert client.get(f"/api/runs/{run_id}").json()["done"] == 6


def test_reads_can_be_made_to_require_the_token(finished_run: FinishedRun) -> None:
    app = create_app(finished_run.env.storage, {}, TOKEN, read_requires_token=True)
    with TestClient(app) as client:
        assert client.get("/api/runs").status_code == 401
        assert client.get("/api/runs", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_the_latest_output_of_a_target_is_its_yaml(client: TestClient) -> None:
    response = client.get("/api/targets/app-0/cluster-a/output")
    assert response.status_code == 200 and "kind: Deployment" in response.text
    assert client.get("/api/targets/app-2/cluster-a/output").status_code == 404


def test_the_openapi_spec_is_published(client: TestClient) -> None:
    assert "/api/runs" in client.get("/openapi.json").json()["paths"]


def test_every_error_the_api_answers_is_documented_in_its_spec_with_the_error_shape(
    client: TestClient, finished_run: FinishedRun
) -> None:
    spec = client.get("/openapi.json").json()
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    assert spec["components"]["schemas"]["Error"]["required"] == ["error"]
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # {"detail": …}: not this API's
    for operations in spec["paths"].values():
        for operation in operations.values():
            assert all(operation["responses"][status]["content"] == error for status in ("401", "403", "422"))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    run = finished_run.run_id
    for method, template, path, options, status in (
        ("get", "/api/runs", "/api/runs", {"params": {"limit": 0}}, 422),
        ("get", "/api/runs/{run_id}", "/api/runs/ffffffff", {}, 404),
        ("get", "/api/runs/{run_id}/targets", f"/api/runs/{run}/targets", {"params": {"stat": "x"}}, 422),
        ("get", "/api/runs/{run_id}/grid", "/api/runs/ffffffff/grid", {}, 404),
        ("get", "/api/outputs/{digest}", "/api/outputs/" + "0" * 64, {}, 404),
        ("get", "/api/snapshots/{digest}", "/api/snapshots/" + "0" * 64, {}, 404),
        ("get", "/api/qualification/{subject_id}", "/api/qualification/7", {}, 404),
        ("get", "/api/targets/{application}/{cluster}/history", "/api/targets/a/b/history", {}, 404),
        ("post", "/api/runs", "/api/runs", {"json": {"catalog": "test-fleet"}}, 401),
        ("post", "/api/runs", "/api/runs", {"json": {"catalog": "x"}, "headers": auth}, 404),
        ("post", "/api/qualification", "/api/qualification", {"json": [], "headers": auth}, 422),
    ):
        response = client.request(method, path, **options)
        assert response.status_code == status, (path, response.text)
        documented = spec["paths"][template][method]["responses"]
        assert documented.get(str(status), {}).get("content") == error, (method, template, status)
        body = response.json()
        assert list(body) == ["error"] and body["error"]["status"] == status
        assert isinstance(body["error"]["detail"], str | list)


def test_a_body_that_is_not_json_is_documented_in_the_spec_with_the_media_type_it_is_served_as(
    client: TestClient, finished_run: FinishedRun
) -> None:
    spec = client.get("/openapi.json").json()["paths"]
    run = finished_run.run_id
    digest = client.get(f"/api/runs/{run}/targets", params={"application": "app-0"}).json()[0][
        "output_digest"
    ]
    for template, path in (
        ("/api/targets/{application}/{cluster}/output", "/api/targets/app-0/cluster-a/output"),
        ("/api/outputs/{digest}", f"/api/outputs/{digest}"),
        (
            "/api/runs/{run_a}/diff/{run_b}/targets/{application}/{cluster}",
            f"/api/runs/{run}/diff/{run}/targets/app-0/cluster-a",
        ),
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        served = response.headers["content-type"].split(";")[0]
        assert spec[template]["get"]["responses"]["200"]["content"] == {
            served: {"schema": {"type": "string"}}
        }


def test_an_output_is_served_by_its_digest_and_unknown_digests_are_404(
    client: TestClient, finished_run: FinishedRun
) -> None:
    target = client.get(
        f"/api/runs/{finished_run.run_id}/targets", params={"application": "app-0", "cluster": "cluster-a"}
    ).json()[0]
    response = client.get(f"/api/outputs/{target['output_digest']}")
    assert response.status_code == 200 and "kind: Deployment" in response.text
    assert client.get("/api/outputs/sha256:" + "0" * 64).status_code == 404


def test_an_output_or_snapshot_digest_may_be_given_with_its_sha256_prefix_as_the_docs_write_it(
    client: TestClient, finished_run: FinishedRun
) -> None:
    target = client.get(f"/api/runs/{finished_run.run_id}/targets", params={"application": "app-0"}).json()[0]
    digest = target["output_digest"]
    snapshot = client.get("/api/snapshots").json()[0]["digest"]
    for path in (f"/api/outputs/sha256:{digest}", f"/outputs/sha256:{digest}"):
        response = client.get(path)
        assert response.status_code == 200 and "Deployment" in response.text, path
    assert client.get(f"/api/outputs/sha256:{digest}/evidence").json()["digest"] == digest
    assert client.get(f"/api/snapshots/sha256:{snapshot}").json()["digest"] == snapshot
    assert client.get(f"/api/snapshots/sha256:{snapshot}/diff/{snapshot}").json()["unchanged"] == 6
    assert client.get("/api/outputs/sha256:" + "0" * 64).json() == {
        "error": {"status": 404, "detail": "no output " + "0" * 64}
    }


def test_the_diff_of_a_target_between_two_runs_shows_changed_lines(
    client: TestClient, finished_run: FinishedRun
) -> None:
    make_catalog(finished_run.catalog_root, apps=0).write_app("app-0", image="ghcr.io/example/app:v2.0.0")
    run_b = client.post(
        "/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": f"Bearer {TOKEN}"}
    ).json()["run_id"]
    deadline = time.monotonic() + 180  # a loaded CI machine: the wait must not end before the run
    # every target of run B, not a count taken from run A: the catalog holds more targets than run A
    # rendered, and a wait that ended early read the diff before app-0/cluster-a was recorded
    while (progress := client.get(f"/api/runs/{run_b}").json())["done"] < progress["total"]:
        assert time.monotonic() < deadline, (
            f"run B finished {progress['done']} of {progress['total']} targets"
        )
        time.sleep(0.2)
    diff = client.get(f"/api/runs/{finished_run.run_id}/diff/{run_b}/targets/app-0/cluster-a")
    assert diff.status_code == 200
    lines = diff.text.splitlines()
    targets_b = client.get(f"/api/runs/{run_b}/targets").text  # said when the diff is not as expected
    assert any(line.startswith("-") and "app:v1.0.0" in line for line in lines), targets_b
    assert any(line.startswith("+") and "app:v2.0.0" in line for line in lines), targets_b
    assert client.get(f"/api/runs/{finished_run.run_id}/diff/nope/targets/app-0/cluster-a").status_code == 404


def test_the_diff_of_a_target_a_run_does_not_have_is_a_404_naming_the_run_and_the_target(
    client: TestClient, finished_run: FinishedRun
) -> None:
    run = finished_run.run_id
    response = client.get(f"/api/runs/{run}/diff/latest/targets/app-9/cluster-a")
    assert response.status_code == 404
    assert response.json() == {"error": {"status": 404, "detail": f"run {run} has no target app-9/cluster-a"}}


def test_a_targets_history_lists_its_results_newest_run_first(
    client: TestClient, finished_run: FinishedRun
) -> None:
    history = client.get("/api/targets/app-2/cluster-a/history").json()
    assert [(item["run_id"], item["state"]) for item in history] == [(finished_run.run_id, "failed")]
    assert history[0]["error_code"]
    assert client.get("/api/targets/app-9/cluster-a/history").status_code == 404
    assert client.get("/api/targets/app-2/cluster-a/history", params={"limt": 1}).status_code == 422


def test_a_runs_grid_is_one_compact_cell_per_target_coloured_by_state(
    client: TestClient, finished_run: FinishedRun
) -> None:
    grid = client.get(f"/api/runs/{finished_run.run_id}/grid").json()
    assert grid["applications"] == ["app-0", "app-1", "app-2"]
    assert grid["clusters"] == ["cluster-a", "cluster-b"]
    cells = {
        (grid["applications"][a], grid["clusters"][c]): (state, code)
        for a, c, state, code, _ in grid["cells"]
    }
    assert len(cells) == 6 and cells[("app-0", "cluster-b")] == ("succeeded", None)
    assert cells[("app-2", "cluster-a")][0] == "failed" and cells[("app-2", "cluster-a")][1]
    targets = {t["id"] for t in client.get(f"/api/runs/{finished_run.run_id}/targets").json()}
    assert {cell[4] for cell in grid["cells"]} == targets


def test_a_runs_grid_filters_and_refuses_unknown_runs_and_parameters(
    client: TestClient, finished_run: FinishedRun
) -> None:
    failed = client.get(f"/api/runs/{finished_run.run_id}/grid", params={"state": "failed"}).json()
    assert failed["applications"] == ["app-2"] and len(failed["cells"]) == 2
    one = client.get(f"/api/runs/{finished_run.run_id}/grid", params={"cluster": "cluster-b"}).json()
    assert one["clusters"] == ["cluster-b"] and len(one["cells"]) == 3
    assert client.get("/api/runs/nope/grid").json()["error"]["status"] == 404
    assert client.get(f"/api/runs/{finished_run.run_id}/grid", params={"stat": "failed"}).status_code == 422
