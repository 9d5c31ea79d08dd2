"""Determinism as a property: any valid Application (webservice, worker, statefulset and cronjob
components with their common traits) and ClusterProfile render to the same bytes twice in this
process and once more in another process (a spawned interpreter, so another hash seed), and the
output reads back as YAML documents that each carry apiVersion, kind and metadata.name."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from farm.core import yamlio
from farm.core.render import RenderRequest, render

# Bounded: each example is a few renders; the other process is started once for the module.
DETERMINISM = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

LABEL = st.from_regex(r"\A[a-z][a-z0-9]{0,7}\Z")
ENV_NAME = st.from_regex(r"\A[A-Z][A-Z0-9_]{0,11}\Z")
# any printable text, quotes, colons, hashes and non-ASCII letters included: the dumper must quote
# them the same way every time
ENV_VALUE = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), max_size=24)
CPU = st.sampled_from(["50m", "100m", "250m", "1", "1500m"])
MEMORY = st.sampled_from(["64Mi", "128Mi", "256Mi", "1Gi"])
SCHEDULE = st.sampled_from(["0 2 * * *", "*/15 * * * *", "@daily", "@hourly", "30 4 * * 1-5"])


def _image(name: str, version: tuple[int, int, int]) -> str:
    return f"registry.example.com/team/{name}:v{version[0]}.{version[1]}.{version[2]}"


VERSION = st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 99))


@st.composite
def _container_properties(draw: st.DrawFn, name: str) -> dict[str, Any]:
    props: dict[str, Any] = {"image": _image(name, draw(VERSION))}
    env_names = draw(st.lists(ENV_NAME, max_size=3, unique=True))
    if env_names:
        props["env"] = [{"name": env, "value": draw(ENV_VALUE)} for env in env_names]
    if draw(st.booleans()):
        props["resources"] = {"requests": {"cpu": draw(CPU), "memory": draw(MEMORY)}}
    if draw(st.booleans()):
        props["command"] = ["/app/" + name]
        props["args"] = draw(st.lists(st.from_regex(r"\A--[a-z]{1,8}\Z"), max_size=3))
    return props


@st.composite
def _configmap_trait(draw: st.DrawFn, name: str) -> dict[str, Any]:
    keys = draw(st.lists(st.from_regex(r"\A[a-z][a-z0-9.]{0,9}\Z"), min_size=1, max_size=3, unique=True))
    props: dict[str, Any] = {"name": f"{name}-config", "data": {key: draw(ENV_VALUE) for key in keys}}
    if draw(st.booleans()):
        props["mountPath"] = f"/etc/{name}"
    return {"type": "configmap", "properties": props}


@st.composite
def _security_context_trait(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "type": "security-context",
        "properties": {"level": "restricted", "runAsUser": draw(st.integers(1000, 65000))},
    }


@st.composite
def _scaler_trait(draw: st.DrawFn, replicas: int) -> dict[str, Any]:
    maximum = draw(st.integers(replicas, replicas + 10))
    return {"type": "scaler", "properties": {"minReplicas": replicas, "maxReplicas": maximum}}


@st.composite
def _networkpolicy_trait(draw: st.DrawFn, port: int) -> dict[str, Any]:
    peer = draw(LABEL)
    return {
        "type": "networkpolicy",
        "properties": {
            "ingress": [
                {"from": [{"podSelector": {"matchLabels": {"app": peer}}}], "ports": [{"port": port}]}
            ]
        },
    }


def _traits(draw: st.DrawFn, candidates: list[st.SearchStrategy[dict[str, Any]]]) -> list[dict[str, Any]]:
    chosen = draw(st.lists(st.sampled_from(range(len(candidates))), max_size=len(candidates), unique=True))
    return [draw(candidates[index]) for index in sorted(chosen)]


@st.composite
def _webservice(draw: st.DrawFn, name: str) -> list[dict[str, Any]]:
    port = draw(st.integers(1024, 65535))
    replicas = draw(st.integers(1, 4))
    props = draw(_container_properties(name)) | {"port": port, "replicas": replicas}
    traits = _traits(
        draw,
        [
            st.just({"type": "expose", "properties": {"hostnames": [f"{name}.example.com"]}}),
            _scaler_trait(replicas),
            _configmap_trait(name),
            _security_context_trait(),
            _networkpolicy_trait(port),
        ],
    )
    return [{"name": name, "type": "webservice", "properties": props, "traits": traits}]


@st.composite
def _worker(draw: st.DrawFn, name: str) -> list[dict[str, Any]]:
    replicas = draw(st.integers(1, 4))
    props = draw(_container_properties(name)) | {"replicas": replicas}
    traits = _traits(draw, [_scaler_trait(replicas), _configmap_trait(name), _security_context_trait()])
    return [{"name": name, "type": "worker", "properties": props, "traits": traits}]


@st.composite
def _statefulset(draw: st.DrawFn, name: str) -> list[dict[str, Any]]:
    port = draw(st.integers(1024, 65535))
    props = draw(_container_properties(name)) | {
        "replicas": draw(st.integers(1, 5)),
        "serviceName": f"{name}-headless",
        "ports": [{"name": "data", "containerPort": port}],
        "volumeClaimTemplates": [
            {"name": "data", "mountPath": "/data", "size": draw(st.sampled_from(["1Gi", "5Gi", "20Gi"]))}
        ],
    }
    traits = _traits(draw, [_configmap_trait(name), _security_context_trait()])
    service = {
        "name": f"{name}-headless",
        "type": "service",
        "properties": {
            "clusterIP": "None",
            "selector": {"app": name},
            "ports": [{"name": "data", "port": port}],
        },
    }
    return [{"name": name, "type": "statefulset", "properties": props, "traits": traits}, service]


@st.composite
def _cronjob(draw: st.DrawFn, name: str) -> list[dict[str, Any]]:
    props = draw(_container_properties(name)) | {"schedule": draw(SCHEDULE)}
    if draw(st.booleans()):
        props["concurrencyPolicy"] = draw(st.sampled_from(["Allow", "Forbid", "Replace"]))
    traits = _traits(draw, [_configmap_trait(name), _security_context_trait()])
    return [{"name": name, "type": "cronjob", "properties": props, "traits": traits}]


KINDS = {"web": _webservice, "wrk": _worker, "sts": _statefulset, "cron": _cronjob}


@st.composite
def applications(draw: st.DrawFn) -> dict[str, Any]:
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=4))
    components: list[dict[str, Any]] = []
    for index, kind in enumerate(kinds):
        components.extend(draw(KINDS[kind](f"{kind}{index}-{draw(LABEL)}")))
    return {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "Application",
        "metadata": {"name": draw(LABEL), "namespace": draw(LABEL)},
        "spec": {"components": components},
    }


@st.composite
def cluster_profiles(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        expose = {
            "controllerType": "ingress",
            "ingressClassName": draw(st.sampled_from(["nginx", "traefik"])),
        }
    else:
        expose = {
            "controllerType": "gateway",
            "gatewayName": draw(LABEL),
            "gatewayNamespace": draw(st.sampled_from(["gateway-system", "edge"])),
        }
    capabilities: dict[str, Any] = {"expose": {"rendering": expose}}
    if draw(st.booleans()):
        capabilities["certificate"] = {
            "rendering": {"issuerRef": {"name": draw(LABEL), "kind": "ClusterIssuer"}}
        }
    return {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": draw(LABEL)},
        "spec": {"capabilities": capabilities},
    }


def _document(value: dict[str, Any]) -> bytes:
    """JSON is YAML: every string stays a string, whatever it looks like."""
    return json.dumps(value, ensure_ascii=False, indent=1).encode("utf-8")


def render_manifests(app: bytes, profile: bytes) -> bytes:
    """Module level, so the other process can run it."""
    return render(RenderRequest(app, profile)).manifests


@pytest.fixture(scope="module")
def other_process() -> Iterator[ProcessPoolExecutor]:
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@DETERMINISM
@given(application=applications(), profile=cluster_profiles())
def test_a_valid_application_renders_to_the_same_bytes_twice_and_in_another_process(
    other_process: ProcessPoolExecutor, application: dict[str, Any], profile: dict[str, Any]
) -> None:
    app_bytes, profile_bytes = _document(application), _document(profile)
    first = render_manifests(app_bytes, profile_bytes)
    assert render_manifests(app_bytes, profile_bytes) == first
    assert other_process.submit(render_manifests, app_bytes, profile_bytes).result() == first
    # read back as the reference reads YAML (yaml.v3): PyYAML's own resolver takes a plain `=` for
    # its value tag, which no Kubernetes reader does
    documents = [document for document in yamlio.load_all(first) if document is not None]
    assert documents, "a valid application renders at least one object"
    for document in documents:
        assert isinstance(document, dict)
        assert isinstance(document.get("apiVersion"), str) and document["apiVersion"]
        assert isinstance(document.get("kind"), str) and document["kind"]
        assert isinstance(document.get("metadata", {}).get("name"), str) and document["metadata"]["name"]
