"""The render request: one value holding every input, its descriptor and digest, and the one rule
that layers values files."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farm.core.errors import ParameterError
from farm.core.params import merge_values
from farm.core.render import RenderRequest, ValuesLayer, render
from farm.core.request import (
    ChartArchive,
    RequestError,
    decode_request,
    pack_requests,
    packed_digests,
    unpack_request,
)
from farm.identity.canonical import canonical_json

APP = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: web
spec:
  components:
    - name: web
      type: webservice
      properties:
        image: ghcr.io/example/web:${tag}
        replicas: ${replicas}
        port: 8080
"""
PACKAGE = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: Package
metadata:
  name: web
spec:
  parameters:
    - {name: tag, type: string, default: v1.0.0}
    - {name: replicas, type: integer, default: 1}
"""
PROFILE = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: prod
spec: {}
"""


def _request(**changes: object) -> RenderRequest:
    base = RenderRequest(APP, PROFILE, package=PACKAGE)
    return dataclasses.replace(base, **changes)


def _store(request: RenderRequest) -> dict[str, bytes]:
    from hashlib import sha256

    return {sha256(blob).hexdigest(): blob for blob in request.documents()}


def test_a_request_decodes_back_from_its_descriptor_and_documents() -> None:
    request = _request(values=(ValuesLayer("web/values.yaml", b"replicas: 2\n"),), namespace="shop")
    blobs = _store(request)
    decoded = decode_request(request.descriptor_bytes, blobs.__getitem__)
    assert decoded == request and decoded.digest == request.digest


def test_a_request_decoded_with_its_checked_descriptor_digest_carries_that_digest() -> None:
    request = _request(namespace="shop")
    plain = decode_request(request.descriptor_bytes, _store(request).__getitem__)
    given = decode_request(request.descriptor_bytes, _store(request).__getitem__, request.digest)
    assert "digest" not in plain.__dict__  # computed when first read
    assert given.__dict__["digest"] == request.digest  # taken as given, not hashed again
    assert given == plain == request and plain.digest == request.digest


def test_a_descriptor_naming_other_bytes_is_refused() -> None:
    request = _request()
    blobs = _store(request)
    forged = {digest: blob.replace(b"v1.0.0", b"v6.6.6") for digest, blob in blobs.items()}
    with pytest.raises(RequestError, match="does not match its digest"):
        decode_request(request.descriptor_bytes, forged.__getitem__)


def test_other_bytes_under_a_digest_already_checked_are_refused_too() -> None:
    # a batch's targets share their documents, and the same bytes are checked once: other bytes
    # under a digest checked before must still be hashed, and refused
    request = _request(values=(ValuesLayer("web/values.yaml", b"replicas: 2\n"),))
    blobs = _store(request)
    assert decode_request(request.descriptor_bytes, blobs.__getitem__) == request
    for digest, blob in blobs.items():
        forged = dict(blobs)
        forged[digest] = blob + b"# forged\n"
        with pytest.raises(RequestError, match="does not match its digest"):
            decode_request(request.descriptor_bytes, forged.__getitem__)
    assert decode_request(request.descriptor_bytes, blobs.__getitem__) == request


def test_a_descriptor_with_an_unknown_field_or_another_layout_is_refused() -> None:
    request = _request()
    blobs = _store(request)
    with pytest.raises(RequestError, match="expected the fields"):
        decode_request(request.descriptor_bytes.replace(b'"sets"', b'"sest"'), blobs.__getitem__)
    with pytest.raises(RequestError, match="canonical"):
        decode_request(request.descriptor_bytes.replace(b",", b", ", 1), blobs.__getitem__)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # what orjson refuses goes to json.loads, which parses it or refuses it as it always did
        ((b'"requestVersion":', b'"requestVersion":18446744073709551617,"x":'), "expected the fields"),
        ((b'"requestVersion":', b'"requestVersion":NaN,"x":'), "expected the fields"),
        ((b"{", b"\xef\xbb\xbf{"), "canonical"),  # json.loads reads past a byte order mark
        ((b"{", b"{{"), "not JSON"),
        ((b'"app":', b'"app":"\xff",'), "not JSON"),
    ],
)
def test_a_descriptor_orjson_cannot_parse_is_read_or_refused_as_json_loads_reads_it(
    change: tuple[bytes, bytes], message: str
) -> None:
    request = _request()
    blobs = _store(request)
    with pytest.raises(RequestError, match=message):
        decode_request(request.descriptor_bytes.replace(*change, 1), blobs.__getitem__)


def test_known_digests_are_never_carried_over_by_replace() -> None:
    known = RenderRequest.with_known_digests({"app": "0" * 64}, app=APP, cluster_profile=PROFILE)
    assert known.descriptor()["app"] == "0" * 64
    assert dataclasses.replace(known, app=b"other").descriptor()["app"] != "0" * 64


def test_a_request_with_known_digests_equals_the_one_its_constructor_builds() -> None:
    fields = {
        "app": APP,
        "cluster_profile": PROFILE,
        "values": (ValuesLayer("web/values.yaml", b"replicas: 2\n"),),
        "namespace": "web",
        "selection": "tier=gold",
    }
    digests = {"app": hashlib.sha256(APP).hexdigest(), "clusterProfile": hashlib.sha256(PROFILE).hexdigest()}
    known = RenderRequest.with_known_digests(digests, **fields)
    built = RenderRequest(**fields)
    assert known == built and hash(known) == hash(built)
    assert (known.descriptor_bytes, known.digest) == (built.descriptor_bytes, built.digest)
    assert dataclasses.replace(known, namespace="other").namespace == "other"
    with pytest.raises(TypeError):
        RenderRequest.with_known_digests(digests, app=APP, cluster_profile=PROFILE, colour="red")


def test_a_cluster_values_file_is_layered_over_the_shared_one() -> None:
    layers = (
        ValuesLayer("web/values.yaml", b"tag: v2.0.0\nreplicas: 2\n"),
        ValuesLayer("web/values/prod.yaml", b"replicas: 5\n"),
    )
    manifests = render(_request(values=layers)).manifests.decode()
    assert "image: ghcr.io/example/web:v2.0.0" in manifests and "replicas: 5" in manifests


def test_a_values_error_names_the_file_the_value_came_from() -> None:
    layers = (
        ValuesLayer("web/values.yaml", b"tag: v2.0.0\n"),
        ValuesLayer("web/values/prod.yaml", b"replicas: five\n"),
    )
    with pytest.raises(ParameterError, match=r"web/values/prod\.yaml: parameter 'replicas'"):
        render(_request(values=layers))


def test_values_merge_mappings_key_by_key_and_later_files_win() -> None:
    merged, origins = merge_values(
        [("a.yaml", {"x": {"keep": 1, "over": 1}, "y": 1}), ("b.yaml", {"x": {"over": 2}, "y": None})]
    )
    assert merged == {"x": {"keep": 1, "over": 2}, "y": None}
    assert origins == {"x": "b.yaml", "y": "b.yaml"}


def _requests() -> list[RenderRequest]:
    return [RenderRequest(APP, PROFILE, namespace=name) for name in ("a", "b", "c")]


def test_a_pack_holds_each_distinct_request_once_and_gives_back_its_descriptor() -> None:
    requests = _requests()
    pack = pack_requests([*requests, requests[0]])
    assert pack == pack_requests(reversed(requests))  # same requests, same bytes
    assert packed_digests(pack) == sorted(request.digest for request in requests)
    for request in requests:
        assert unpack_request(pack, request.digest) == request.descriptor_bytes


def test_a_pack_refuses_a_digest_it_does_not_hold_and_bytes_that_do_not_match_their_digest() -> None:
    first, second, third = _requests()
    pack = pack_requests([first, second])
    with pytest.raises(RequestError, match=f"holds no request {third.digest}"):
        unpack_request(pack, third.digest)
    forged = pack.replace(b'"namespace":"a"', b'"namespace":"z"')
    with pytest.raises(RequestError, match=f"stored as {first.digest} does not match its digest"):
        unpack_request(forged, first.digest)
    with pytest.raises(RequestError, match="not a request pack"):
        unpack_request(first.descriptor_bytes, first.digest)


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    namespace=st.none() | _TEXT,
    selection=_TEXT,
    sets=st.lists(_TEXT, max_size=3),
    sources=st.tuples(_TEXT, _TEXT, _TEXT),
    values=st.lists(st.tuples(_TEXT, st.binary(max_size=8)), max_size=3),
    package=st.none() | st.binary(max_size=8),
    resolved=st.none() | st.binary(max_size=8),
)
def test_the_descriptor_bytes_are_the_canonical_json_of_the_descriptor(
    namespace, selection, sets, sources, values, package, resolved
) -> None:
    request = RenderRequest(
        APP,
        PROFILE,
        package=package,
        values=tuple(ValuesLayer(source, data) for source, data in values),
        sets=tuple(sets),
        namespace=namespace,
        selection=selection,
        app_source=sources[0],
        cluster_profile_source=sources[1],
        package_source=sources[2],
        resolved_profile=resolved,
    )
    assert request.descriptor_bytes == canonical_json(request.descriptor())
    assert decode_request(request.descriptor_bytes, _documents_of(request).__getitem__) == request


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sets", [1]),  # the request would hold "1": another descriptor
        ("sets", "a=b"),  # a string where a list belongs: the request would hold ("a", "=", "b")
        ("selection", 7),
        ("namespace", ["shop"]),
        ("requestVersion", True),  # equal to 1, written as true
        ("sources", {"app": 1, "clusterProfile": "c", "package": "p"}),
    ],
)
def test_a_descriptor_whose_field_the_request_would_write_otherwise_is_not_canonical(
    field: str, value: object
) -> None:
    request = _request(values=(ValuesLayer("web/values.yaml", b"replicas: 2\n"),), sets=("a=b",))
    descriptor = request.descriptor()
    descriptor[field] = value
    with pytest.raises(RequestError, match="canonical"):
        decode_request(canonical_json(descriptor), _store(request).__getitem__)


def test_a_values_layer_source_that_is_not_a_string_is_not_canonical() -> None:
    request = _request(values=(ValuesLayer("7", b"replicas: 2\n"),))
    descriptor = request.descriptor()
    descriptor["values"][0]["source"] = 7
    with pytest.raises(RequestError, match="canonical"):
        decode_request(canonical_json(descriptor), _store(request).__getitem__)


def test_a_descriptor_holding_a_lone_surrogate_is_refused_as_a_request_error() -> None:
    # json.loads reads the escape into a string that has no UTF-8 form: a refusal of the
    # request (its target fails), never an exception that fails the job
    request = _request(namespace="shop")
    forged = request.descriptor_bytes.replace(b'"namespace":"shop"', b'"namespace":"\\ud800"')
    with pytest.raises(RequestError, match="canonical"):
        decode_request(forged, _store(request).__getitem__)


def test_a_decoded_request_carries_the_very_descriptor_it_was_read_from() -> None:
    request = _request(values=(ValuesLayer("web/values.yaml", b"replicas: 2\n"),), namespace="é ✓")
    decoded = decode_request(request.descriptor_bytes, _store(request).__getitem__)
    assert decoded.__dict__["descriptor_bytes"] == request.descriptor_bytes  # not written again


def _documents_of(request: RenderRequest) -> dict[str, bytes]:
    return {hashlib.sha256(blob).hexdigest(): blob for blob in request.documents()}


CHART = ChartArchive("https://charts.example.com", "web", "1.2.0", b"a chart archive")


def test_a_request_with_charts_names_each_archive_by_digest_and_the_helm_version() -> None:
    request = _request(charts=(CHART,), helm_version="v3.14.2+gabc")
    descriptor = request.descriptor()
    assert descriptor["charts"] == [
        {
            "repository": "https://charts.example.com",
            "chart": "web",
            "version": "1.2.0",
            "digest": hashlib.sha256(b"a chart archive").hexdigest(),
            "vendored": "",
        }
    ]
    assert descriptor["helmVersion"] == "v3.14.2+gabc"
    assert request.descriptor_bytes == canonical_json(descriptor)
    decoded = decode_request(request.descriptor_bytes, _store(request).__getitem__)
    assert decoded == request and decoded.digest == request.digest


def test_other_chart_bytes_or_another_helm_give_another_request_digest() -> None:
    request = _request(charts=(CHART,), helm_version="v3.14.2+gabc")
    republished = dataclasses.replace(CHART, data=b"other bytes, same version")
    assert _request(charts=(republished,), helm_version="v3.14.2+gabc").digest != request.digest
    assert _request(charts=(CHART,), helm_version="v3.15.0+gdef").digest != request.digest


def test_a_request_without_charts_has_no_chart_fields_and_keeps_its_digest() -> None:
    descriptor = _request().descriptor()
    assert "charts" not in descriptor and "helmVersion" not in descriptor
    assert _request().digest == hashlib.sha256(canonical_json(descriptor)).hexdigest()


def test_a_descriptor_with_charts_but_no_helm_version_is_refused() -> None:
    request = _request(charts=(CHART,), helm_version="v3.14.2+gabc")
    descriptor = request.descriptor()
    del descriptor["helmVersion"]
    with pytest.raises(RequestError, match="come together"):
        decode_request(canonical_json(descriptor), _store(request).__getitem__)
