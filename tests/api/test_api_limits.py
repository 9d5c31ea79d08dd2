"""The API's limits: the token is checked before a request body is read, a body is bounded (413),
every path parameter is validated (422, never a 500), an error never echoes a whole request value,
and every response carries the security headers."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from fleet.conftest import FleetEnv, fleet_env  # noqa: F401

from api.conftest import TOKEN
from farm.api import create_app
from farm.api.security import MAX_BODY_BYTES

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def api(fleet_env: FleetEnv, tmp_path: Path) -> FastAPI:  # noqa: F811
    return create_app(fleet_env.storage, {"test-fleet": tmp_path / "catalog"}, TOKEN)


@pytest.fixture
def client(api: FastAPI) -> Iterator[TestClient]:
    with TestClient(api, raise_server_exceptions=False) as test_client:
        yield test_client


def call(
    app: FastAPI, method: str, path: str, chunks: list[bytes], headers: dict[str, str]
) -> tuple[int, int]:
    """Send a request straight to the ASGI app, the body in ``chunks`` with no declared length;
    the response status and how many chunks the app asked for."""
    asked = 0
    status = 0

    async def receive() -> dict:
        nonlocal asked
        asked += 1
        if asked <= len(chunks):
            return {"type": "http.request", "body": chunks[asked - 1], "more_body": asked < len(chunks)}
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    asyncio.run(app(scope, receive, send))
    return status, asked


@pytest.mark.parametrize("path", ["/api/runs", "/api/qualification"])
def test_a_body_sent_without_a_token_is_refused_before_any_of_it_is_read(api: FastAPI, path: str) -> None:
    status, asked = call(api, "POST", path, [b"x" * 65536] * 64, {"content-type": "application/json"})
    assert status == 401 and asked == 0


def test_a_body_over_the_limit_is_413_whether_or_not_it_declares_its_length(
    api: FastAPI, client: TestClient
) -> None:
    declared = client.post("/api/runs", content=b"{" + b" " * MAX_BODY_BYTES + b"}", headers=AUTH)
    assert declared.status_code == 413
    assert declared.json()["error"]["detail"] == f"the request body is over the {MAX_BODY_BYTES}-byte limit"
    chunks = [b" " * 65536] * (MAX_BODY_BYTES // 65536 + 8)
    status, asked = call(api, "POST", "/api/runs", chunks, {**AUTH, "content-type": "application/json"})
    assert status == 413 and asked < len(chunks)


def test_a_body_within_the_limit_still_reaches_its_route(client: TestClient) -> None:
    response = client.post("/api/runs", json={"catalog": "elsewhere"}, headers=AUTH)
    assert response.status_code == 404
    assert response.json()["error"]["detail"] == "catalog 'elsewhere' is not configured on this server"


@pytest.mark.parametrize(
    "path",
    [
        "/api/qualification/99999999999999999999999",
        "/qualification/99999999999999999999999",
        "/api/qualification/2147483648",
        "/api/runs/" + "r" * 300,
        "/api/runs/a.b/targets",
        "/api/outputs/sha256:" + "0" * 200,
        "/api/snapshots/a.b",
        "/api/targets/app%0a/cluster-a/output",
        "/api/targets/" + "a" * 300 + "/cluster-a/history",
        "/runs/run/targets/a.b",
    ],
)
def test_a_path_parameter_out_of_its_bounds_is_a_422_not_a_500(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["status"] == 422


@pytest.mark.parametrize("path", ["/api/runs", "/api/qualification"])
def test_an_error_never_echoes_a_whole_request_value(client: TestClient, path: str) -> None:
    catalog = "c" * 100_000
    response = client.post(path, json={"catalog": catalog}, headers=AUTH)
    assert response.status_code == 404
    detail = response.json()["error"]["detail"]
    assert len(detail) < 400 and "(100000 characters)" in detail


@pytest.mark.parametrize("path", ["/", "/snapshots", "/api/runs", "/api/qualification/1"])
def test_every_response_carries_the_security_headers(client: TestClient, path: str) -> None:
    headers = client.get(path, headers={"accept": "text/html"}).headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"


def test_a_refused_body_is_a_clean_json_error(client: TestClient) -> None:
    response = client.post("/api/runs", content=json.dumps({"catalog": "x"}))
    assert response.status_code == 401
    assert response.json() == {"error": {"status": 401, "detail": "a valid bearer token is required"}}


@pytest.mark.parametrize(
    "path", ["/api/runs", "/api/snapshots", "/api/qualification", "/api/targets/app/cluster/history", "/"]
)
def test_a_cursor_nested_too_deep_to_decode_is_a_422_not_a_500(client: TestClient, path: str) -> None:
    cursor = base64.urlsafe_b64encode(b"[" * 6000).decode()  # 8,000 characters, within a URL's bounds
    response = client.get(path, params={"cursor": cursor})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["detail"] == [
        {"loc": ["query", "cursor"], "msg": "not a cursor this API gave out"}
    ]


@pytest.mark.parametrize(
    ("path", "sort", "key"),
    [
        ("/api/runs", "-created_at", [{"at": "0001-01-01T00:00:00+14:00"}, "run"]),
        ("/", None, [{"at": "9999-12-31T23:59:59-14:00"}, "run"]),
        ("/api/runs", "created_at", [{"at": "2026-01-01T00:00:00+00:00"}, "run\u0000"]),
        ("/api/snapshots", "created_at", [{"at": "2026-01-01T00:00:00+00:00"}, "\ud800"]),
        ("/api/targets/app/cluster/history", "-created_at", [{"at": "2026-01-01"}, "a\u0000"]),
        ("/api/qualification", "subject", ["cluster", "", 2**31]),
        ("/api/qualification", "subject", ["cluster", "", 10**30]),
        ("/api/qualification", "-since", [{"at": "2026-01-01T00:00:00+00:00"}, -(2**63)]),
        ("/api/qualification", "state", ["qualified", "cluster\u0000", "", 1]),
    ],
)
def test_a_cursor_holding_a_value_the_database_cannot_compare_is_a_422_not_a_500(
    client: TestClient, path: str, sort: str | None, key: list
) -> None:
    cursor = base64.urlsafe_b64encode(json.dumps([sort or "-created_at", key]).encode()).decode()
    response = client.get(path, params={"cursor": cursor, **({"sort": sort} if sort else {})})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["detail"] == [
        {"loc": ["query", "cursor"], "msg": "not a cursor this API gave out"}
    ]


@pytest.mark.parametrize(
    ("method", "path", "allowed", "accept"),
    [
        ("PUT", "/api/runs", "GET, HEAD, POST", "application/json"),
        ("DELETE", "/api/runs/latest", "GET, HEAD", "application/json"),
        ("POST", "/runs/latest", "GET, HEAD", "text/html"),
    ],
)
def test_a_method_a_route_does_not_take_is_a_405_naming_those_it_takes_in_allow(
    client: TestClient, method: str, path: str, allowed: str, accept: str
) -> None:
    response = client.request(method, path, headers={**AUTH, "accept": accept})
    assert response.status_code == 405
    assert response.headers["allow"] == allowed


def test_a_request_refused_for_its_token_is_a_401_naming_the_bearer_scheme(
    fleet_env: FleetEnv,  # noqa: F811
    client: TestClient,
) -> None:
    refused = client.post("/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": "Bearer no"})
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Bearer realm="farm"'
    reads = create_app(fleet_env.storage, {}, TOKEN, read_requires_token=True)
    with TestClient(reads) as reading:
        for path in ("/api/runs", "/"):
            response = reading.get(path)
            assert response.status_code == 401, path
            assert response.headers["www-authenticate"] == 'Bearer realm="farm"', path


@pytest.mark.parametrize(
    ("body", "msg"),
    [
        (b'{"catalog": "\xff"}', "the body is not JSON: it is not UTF-8 (invalid start byte at byte 13)"),
        (b"[" * 100_000, "the body is not JSON this API reads: it is nested too deep"),
    ],
)
@pytest.mark.parametrize("path", ["/api/runs", "/api/qualification"])
def test_a_json_body_that_cannot_be_decoded_is_a_422_naming_why_as_malformed_json_is(
    client: TestClient, path: str, body: bytes, msg: str
) -> None:
    response = client.post(path, content=body, headers={**AUTH, "content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["detail"] == [{"loc": ["body"], "msg": msg, "type": "json_invalid"}]
    malformed = client.post(
        path, content=b'{"catalog": ', headers={**AUTH, "content-type": "application/json"}
    )
    assert malformed.status_code == 422 and malformed.json()["error"]["detail"][0]["type"] == "json_invalid"


@pytest.mark.parametrize("path", ["/api/runs", "/api/qualification"])
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_a_body_sent_as_another_media_type_than_json_is_a_415_naming_it(
    client: TestClient, path: str, content_type: str
) -> None:
    response = client.post(
        path, content=b'{"catalog": "elsewhere"}', headers={**AUTH, "content-type": content_type}
    )
    assert response.status_code == 415, response.text
    assert response.json()["error"]["detail"] == (
        f"the body must be JSON (content-type: application/json), not {content_type}"
    )
    for json_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        sent = client.post(
            path, content=b'{"catalog": "elsewhere"}', headers={**AUTH, "content-type": json_type}
        )
        assert sent.status_code == 404, json_type  # read as JSON: the catalog is not configured


def test_a_token_with_bytes_outside_ascii_is_refused_with_401_or_accepted_when_it_is_the_token(
    fleet_env: FleetEnv,  # noqa: F811
    client: TestClient,
) -> None:
    for method, path in (("POST", "/api/runs"), ("GET", "/api/runs")):
        response = client.request(method, path, json={}, headers={"Authorization": b"Bearer \xe9t\xe9"})
        expected = 401 if method == "POST" else 200  # reads need no token here
        assert response.status_code == expected, (method, response.text)
    reads = create_app(fleet_env.storage, {}, "jeton-été", read_requires_token=True)
    with TestClient(reads) as reading:
        assert reading.get("/api/runs", headers={"Authorization": b"Bearer \xe9t\xe9"}).status_code == 401
        sent = reading.get("/api/runs", headers={"Authorization": "Bearer jeton-été".encode()})
        assert sent.status_code == 200


@pytest.mark.parametrize(
    "path", ["/api/runs", "/api/snapshots", "/api/qualification", "/", "/snapshots", "/healthz"]
)
def test_head_is_answered_as_get_without_its_body(client: TestClient, path: str) -> None:
    got = client.get(path)
    head = client.head(path)
    assert head.status_code == got.status_code == 200, path
    assert head.content == b"" and head.headers["content-length"] == str(len(got.content))
    assert head.headers["content-type"] == got.headers["content-type"]
    if path.startswith("/api/"):  # counted by its route, as a GET is
        label = f'farm_http_request_seconds_count{{method="HEAD",route="{path}",status="200"}}'
        assert label in client.get("/metrics/").text
