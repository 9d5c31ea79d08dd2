"""``RenderRequest``: every input of one render, as one value.

The request is what the catalog builds per target, what a snapshot stores, what a worker fetches
and what the action key hashes, so a new render input added here can never be left out of any of
them.

Its **digest** is the sha256 of its *descriptor*: canonical JSON (sorted keys, compact) naming each
document by its own sha256 next to the small scalar inputs (``--set`` flags, namespace, selection,
the source names that appear in error messages). Documents are stored once as their own
content-addressed blobs; descriptors are stored in request packs (``pack_requests``, one per
application of a snapshot). A worker that reads a descriptor and the documents it names, each
verified against its digest, holds exactly the request that was planned (a Merkle tree of two levels, as build systems name an action by its input root).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from hashlib import sha256
from json.encoder import encode_basestring
from typing import Any, Generic, TypeVar

import orjson

REQUEST_VERSION = 1
_DESCRIPTOR_KEYS = {
    "requestVersion",
    "app",
    "package",
    "values",
    "clusterProfile",
    "sets",
    "namespace",
    "selection",
    "sources",
}
_SOURCE_KEYS = {"app", "package", "clusterProfile"}
# present only on a profiled request, so an unprofiled request keeps the digest it always had
_PROFILED_KEY = "resolvedProfile"
# present only on a request whose application renders charts (together), likewise
_CHARTS_KEY = "charts"
_HELM_KEY = "helmVersion"
_CHART_KEYS = {"repository", "chart", "version", "digest", "vendored"}


class RequestError(ValueError):
    """A descriptor that is not a render request; the message names the field."""


def _digest(data: bytes) -> str:
    return sha256(data).hexdigest()


_Value = TypeVar("_Value")


class _computed_once(Generic[_Value]):  # noqa: N801 (used as a decorator, like cached_property)
    """``functools.cached_property`` without its lock (Python 3.11 takes one lock shared by every
    instance on each first read, a cost a snapshot of 100,000 requests pays twice per request). A
    request is immutable, so two threads computing the same value at once store equal values."""

    def __init__(self, compute: Callable[[Any], _Value]) -> None:
        self._compute = compute
        self._name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, instance: Any, owner: type | None = None) -> _Value:
        if instance is None:
            return self  # type: ignore[return-value]
        value = self._compute(instance)
        instance.__dict__[self._name] = value  # later reads find it before this descriptor
        return value


def _json_text(text: str | None) -> str:
    """``text`` as ``json.dumps(..., ensure_ascii=False)`` writes it (the same encoder function)."""
    return "null" if text is None else encode_basestring(text)


@dataclass(frozen=True)
class ValuesLayer:
    """One values file of a request: its name in messages and its bytes. Later layers win."""

    source: str
    data: bytes

    @_computed_once
    def digest(self) -> str:
        """The file's sha256, computed once however many requests share the layer."""
        return _digest(self.data)


@dataclass(frozen=True, order=True)
class ChartArchive:
    """One chart a render reads: the reference its component names (repository, chart, version,
    as ``farm.core.chartrefs`` finds them) and the chart itself, a ``.tgz`` archive. ``vendored``
    names the catalog folder it was packed from (``<app>/charts/<chart>``); "" when it was fetched
    from its repository at planning."""

    repository: str
    chart: str
    version: str
    data: bytes = field(repr=False)
    vendored: str = ""

    def matches(self, repository: str, chart: str, version: str) -> bool:
        return (self.repository, self.chart, self.version) == (repository, chart, version)

    @_computed_once
    def digest(self) -> str:
        """The archive's sha256, computed once however many requests name it."""
        return _digest(self.data)

    def entry(self) -> dict[str, str]:
        return {
            "repository": self.repository,
            "chart": self.chart,
            "version": self.version,
            "digest": self.digest,
            "vendored": self.vendored,
        }


@dataclass(frozen=True)
class RenderRequest:
    """Every input of one render. Bytes are the documents exactly as the catalog holds them."""

    app: bytes
    cluster_profile: bytes
    package: bytes | None = None
    values: tuple[ValuesLayer, ...] = ()
    sets: tuple[str, ...] = ()
    namespace: str | None = None
    selection: str = ""
    app_source: str = "app.yaml"
    cluster_profile_source: str = "cluster.yaml"
    package_source: str = "kurel.yaml"
    # the resolved ClusterProfile document of a profiled target (the lock check reads its ownedPaths)
    resolved_profile: bytes | None = None
    # the charts its chart components render (sorted), and the helm version that renders them
    # (``helm version --short`` of the planning process); both empty for a request without charts
    charts: tuple[ChartArchive, ...] = ()
    helm_version: str = ""
    # document digests a catalog computed once for many requests; never copied by replace()
    _digests: dict[str, str] = field(default_factory=dict, init=False, compare=False, repr=False)

    def descriptor(self) -> dict[str, Any]:
        """The request with every document replaced by its sha256 (what the digest covers)."""
        descriptor = self._base_descriptor()
        if self.resolved_profile is not None:
            descriptor[_PROFILED_KEY] = _digest(self.resolved_profile)
        if self.charts or self.helm_version:
            descriptor[_CHARTS_KEY] = [archive.entry() for archive in self.charts]
            descriptor[_HELM_KEY] = self.helm_version
        return descriptor

    def document_digests(self) -> dict[str, str | None]:
        """The digests its descriptor names its ``app``, ``package`` (None without one) and
        ``clusterProfile`` documents by."""
        return {
            "app": self._document_digest("app", self.app),
            "package": self._document_digest("package", self.package) if self.package is not None else None,
            "clusterProfile": self._document_digest("clusterProfile", self.cluster_profile),
        }

    def _base_descriptor(self) -> dict[str, Any]:
        digests = self.document_digests()
        return {
            "requestVersion": REQUEST_VERSION,
            "app": digests["app"],
            "package": digests["package"],
            "values": [{"source": layer.source, "digest": layer.digest} for layer in self.values],
            "clusterProfile": digests["clusterProfile"],
            "sets": list(self.sets),
            "namespace": self.namespace,
            "selection": self.selection,
            "sources": {
                "app": self.app_source,
                "package": self.package_source,
                "clusterProfile": self.cluster_profile_source,
            },
        }

    def _document_digest(self, name: str, data: bytes) -> str:
        known = self._digests.get(name)
        return known if known is not None else _digest(data)

    @_computed_once
    def descriptor_bytes(self) -> bytes:
        """The descriptor as canonical JSON (sorted keys, compact, UTF-8): the bytes
        ``json.dumps(self.descriptor(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
        gives, written field by field in key order because a snapshot writes one per target
        (a test holds the two equal). A request with charts (rare) is written by ``json.dumps``."""
        if self.charts or self.helm_version:
            return json.dumps(
                self.descriptor(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
            ).encode()
        digests = self.document_digests()
        package = _json_text(digests["package"])
        head = (
            f'{{"app":"{digests["app"]}","clusterProfile":"{digests["clusterProfile"]}",'
            f'"namespace":{_json_text(self.namespace)},"package":{package},"requestVersion":{REQUEST_VERSION}'
        )
        if self.resolved_profile is not None:
            head += f',"resolvedProfile":"{_digest(self.resolved_profile)}"'
        sets = ",".join(map(_json_text, self.sets))
        values = ",".join(
            f'{{"digest":"{layer.digest}","source":{_json_text(layer.source)}}}' for layer in self.values
        )
        sources = (
            f'{{"app":{_json_text(self.app_source)},"clusterProfile":{_json_text(self.cluster_profile_source)},'
            f'"package":{_json_text(self.package_source)}}}'
        )
        tail = f',"selection":{_json_text(self.selection)},"sets":[{sets}],"sources":{sources},"values":[{values}]}}'
        return (head + tail).encode()

    @_computed_once
    def digest(self) -> str:
        return _digest(self.descriptor_bytes)

    def documents(self) -> list[bytes]:
        """The document blobs the descriptor names, each once."""
        blobs = [self.app, self.cluster_profile, *(layer.data for layer in self.values)]
        if self.package is not None:
            blobs.append(self.package)
        if self.resolved_profile is not None:
            blobs.append(self.resolved_profile)
        blobs += [archive.data for archive in self.charts]
        return blobs

    @staticmethod
    def with_known_digests(digests: dict[str, str], **fields: Any) -> RenderRequest:
        """A request whose document digests the caller already computed (a catalog hashes each
        application and ClusterProfile once, not once per target). ``digests`` keys: ``app``,
        ``package``, ``clusterProfile``; they must be the sha256 of the bytes given."""
        if not _REQUIRED_FIELDS <= fields.keys() <= _INIT_FIELDS:
            request = RenderRequest(**fields)  # raises the TypeError the constructor raises
            object.__setattr__(request, "_digests", dict(digests))
            return request
        # the frozen dataclass's __init__ sets each field through object.__setattr__: filling the
        # instance's dict at once builds the same object in a fraction of the time (a snapshot
        # builds one request per target)
        request = object.__new__(RenderRequest)
        request.__dict__.update(_DEFAULTS, **fields, _digests=dict(digests))
        return request


_REQUIRED_FIELDS = {"app", "cluster_profile"}
_INIT_FIELDS = {f.name for f in fields(RenderRequest) if f.init}
_DEFAULTS = {f.name: f.default for f in fields(RenderRequest) if f.init and f.name not in _REQUIRED_FIELDS}


# digest → the bytes object last checked against it: the same object (held here, so never another
# one at its address) needs no second sha256. Bounded: emptied when full.
_VERIFIED: dict[str, bytes] = {}
_VERIFIED_MAX = 4096


def _remember_verified(digest: str, data: bytes) -> None:
    if len(_VERIFIED) >= _VERIFIED_MAX:
        _VERIFIED.clear()
    _VERIFIED[digest] = data


def _json_loads(data: bytes) -> Any:
    """``json.loads(data)``, parsed by orjson where it can (a worker decodes one descriptor per
    target): what orjson refuses (an integer beyond 64 bits, NaN, a byte order mark, text that is
    not JSON) is given to ``json.loads``, which parses it or raises as it always did. Where both
    parse, they give the same values."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def decode_request(
    descriptor: bytes, fetch: Callable[[str], bytes], descriptor_digest: str | None = None
) -> RenderRequest:
    """The request a descriptor names, its documents read through ``fetch(digest)``.

    ``fetch`` must return the bytes of that digest (an object store verifies what it reads); the
    digests are checked here again so a request is never built from bytes it does not name.
    ``descriptor_digest``: the sha256 of ``descriptor``, when the caller has just checked it (a
    request read out of storage): the request's ``digest``, not computed again.
    """
    try:
        raw = _json_loads(descriptor)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(f"render request: not JSON ({exc})") from None
    if not isinstance(raw, dict) or set(raw) - {_PROFILED_KEY, _CHARTS_KEY, _HELM_KEY} != _DESCRIPTOR_KEYS:
        got = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise RequestError(f"render request: expected the fields {sorted(_DESCRIPTOR_KEYS)}, got {got}")
    if (_CHARTS_KEY in raw) != (_HELM_KEY in raw):
        raise RequestError(f"render request: {_CHARTS_KEY} and {_HELM_KEY} come together")
    if raw["requestVersion"] != REQUEST_VERSION:
        raise RequestError(
            f"render request: requestVersion {raw['requestVersion']!r} is not {REQUEST_VERSION}"
        )
    sources = raw["sources"]
    if not isinstance(sources, dict) or set(sources) != _SOURCE_KEYS:
        raise RequestError("render request: sources must name app, package and clusterProfile")

    def document(name: str, digest: Any) -> bytes:
        if not isinstance(digest, str):
            raise RequestError(f"render request: {name} must be a digest")
        data = fetch(digest)
        if _VERIFIED.get(digest) is not data:  # the targets of a batch share their documents
            if _digest(data) != digest:
                raise RequestError(f"render request: {name} document does not match its digest {digest}")
            _remember_verified(digest, data)
        return data

    layers = []
    for index, layer in enumerate(raw["values"] if isinstance(raw["values"], list) else [None]):
        if not isinstance(layer, dict) or set(layer) != {"source", "digest"}:
            raise RequestError(f"render request: values[{index}] must hold source and digest")
        values = ValuesLayer(str(layer["source"]), document(f"values[{index}]", layer["digest"]))
        values.__dict__["digest"] = layer["digest"]  # just checked: ``digest`` need not hash it again
        layers.append(values)
    # each document was just checked against its digest: the canonical check below need not
    # hash them again
    known = {"app": raw["app"], "clusterProfile": raw["clusterProfile"]}
    if raw["package"] is not None:
        known["package"] = raw["package"]
    request = RenderRequest.with_known_digests(
        known,
        app=document("app", raw["app"]),
        cluster_profile=document("clusterProfile", raw["clusterProfile"]),
        package=document("package", raw["package"]) if raw["package"] is not None else None,
        values=tuple(layers),
        sets=tuple(str(entry) for entry in raw["sets"]),
        namespace=raw["namespace"],
        selection=str(raw["selection"]),
        app_source=str(sources["app"]),
        cluster_profile_source=str(sources["clusterProfile"]),
        package_source=str(sources["package"]),
        resolved_profile=document(_PROFILED_KEY, raw[_PROFILED_KEY]) if _PROFILED_KEY in raw else None,
        charts=_decode_charts(raw.get(_CHARTS_KEY, []), document),
        helm_version=str(raw.get(_HELM_KEY, "")),
    )
    if not _is_canonical(raw, request, descriptor):
        raise RequestError("render request: the descriptor is not in canonical form")
    if descriptor_digest is not None:  # the digest of these very bytes, which the request writes
        request.__dict__["digest"] = descriptor_digest
    return request


def _is_canonical(raw: dict[str, Any], request: RenderRequest, descriptor: bytes) -> bool:
    """Whether ``descriptor`` is the canonical form of ``request`` (decoded from it as ``raw``),
    so the request is exactly what the descriptor's digest names.

    A worker checks one descriptor per target. Where every field of ``raw`` already has the type
    its request field holds (strings, not values ``str()`` turned into strings; the integer
    version), the request writes ``raw`` back field for field, so orjson's sorted, compact bytes
    of ``raw`` are its canonical bytes (``farm.identity.canonical``: orjson writes what
    ``json.dumps`` writes for such a value) at a tenth of the cost of writing the request again.
    Anything else, a request with charts among it, is written by the request itself."""
    try:
        if not (request.charts or request.helm_version) and _holds_request_types(raw):
            if orjson.dumps(raw, option=orjson.OPT_SORT_KEYS) != descriptor:
                return False
            request.__dict__["descriptor_bytes"] = descriptor
            return True
        return request.descriptor_bytes == descriptor
    except (orjson.JSONEncodeError, UnicodeEncodeError):  # a lone surrogate: no UTF-8 form at all
        return False


def _holds_request_types(raw: dict[str, Any]) -> bool:
    """Every scalar of a decoded descriptor (other than its checked digests) has the type of the
    request field it fills."""
    namespace, sets, values = raw["namespace"], raw["sets"], raw["values"]
    return (
        type(raw["requestVersion"]) is int
        and (namespace is None or type(namespace) is str)
        and type(raw["selection"]) is str
        and type(sets) is list
        and all(type(entry) is str for entry in sets)
        and all(type(source) is str for source in raw["sources"].values())
        and type(values) is list
        and all(type(layer["source"]) is str for layer in values)
    )


def _decode_charts(entries: Any, document: Callable[[str, Any], bytes]) -> tuple[ChartArchive, ...]:
    if not isinstance(entries, list):
        raise RequestError(f"render request: {_CHARTS_KEY} must be a list")
    archives = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != _CHART_KEYS:
            raise RequestError(f"render request: charts[{index}] must hold {sorted(_CHART_KEYS)}")
        if not all(isinstance(value, str) for value in entry.values()):
            raise RequestError(f"render request: charts[{index}]: every field is a string")
        data = document(f"charts[{index}]", entry["digest"])
        archives.append(
            ChartArchive(entry["repository"], entry["chart"], entry["version"], data, entry["vendored"])
        )
    return tuple(archives)


# A request pack: many descriptors in one blob, so a snapshot stores one blob per application
# instead of one per target. A header line, then one line per distinct request, sorted by digest:
# ``<digest> <descriptor>``. A canonical descriptor is compact JSON, which never holds a raw
# newline, so a line is one request. The pack is only a container: whoever reads a descriptor out
# of it checks that the descriptor hashes to the digest it asked for.
PACK_HEADER = b"farm-request-pack/1\n"


def pack_requests(requests: Iterable[RenderRequest]) -> bytes:
    """The pack holding each distinct request of ``requests`` once (same requests, same bytes)."""
    lines = sorted({request.digest: request.descriptor_bytes for request in requests}.items())
    return PACK_HEADER + b"".join(b"%s %s\n" % (digest.encode(), data) for digest, data in lines)


def unpack_request(pack: bytes, digest: str) -> bytes:
    """The descriptor stored under ``digest`` in ``pack``, verified against the digest.

    Raises ``RequestError`` when the blob is not a pack, does not hold the digest, or holds bytes
    under it that do not hash to it.
    """
    if not pack.startswith(PACK_HEADER):
        raise RequestError("render request pack: the blob is not a request pack")
    start = pack.find(b"\n%s " % digest.encode(), len(PACK_HEADER) - 1)
    if start < 0:
        raise RequestError(f"render request pack: it holds no request {digest}")
    start += len(digest) + 2
    descriptor = pack[start : pack.find(b"\n", start)]
    if _digest(descriptor) != digest:
        raise RequestError(f"render request pack: the request stored as {digest} does not match its digest")
    return descriptor


def packed_digests(pack: bytes) -> list[str]:
    """The digests a pack holds, in its order."""
    if not pack.startswith(PACK_HEADER):
        raise RequestError("render request pack: the blob is not a request pack")
    return [line[:64].decode() for line in pack[len(PACK_HEADER) :].splitlines()]
