"""YAML in and out, byte-compatible with the reference renderer.

Reading follows yaml.v3 (what the reference decodes documents with): only ``true``/``false`` in
their three spellings are booleans, ``yes``/``on`` stay strings, timestamps stay strings, ints
follow Go's ``strconv.ParseInt(s, 0, 64)`` after removing underscores, duplicate keys are refused
and only the first document is read.

Reading is bounded, as yaml.v3 bounds it and more tightly: a document nests at most
``MAX_DEPTH`` levels, expands to at most ``MAX_NODES`` nodes (aliases counted every time they are
used) and may not be mostly aliases (yaml.v3's "excessive aliasing" rule), so a kilobyte alias bomb
or a thousand nested brackets is refused before anything walks it. A 5,000-digit integer reads as
a string, as yaml.v3 reads it (it fits no Go integer or float), without ever converting it.

Writing follows the reference's serializer: Go ``encoding/json`` followed by ``sigs.k8s.io/yaml``
on top of yaml.v2. Keys are sorted with yaml.v2's comparator, strings that yaml.v2 would resolve to
another type are double-quoted, multi-line strings use literal blocks, everything else is left to
libyaml's analysis (plain or single-quoted), lines fold at 80 columns, sequences under a mapping
key are not indented, and documents are joined with ``---``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterable
from typing import Any

import yaml

from farm.core import yamlemit
from farm.core.errors import FieldError
from farm.core.yamlscalars import (
    V3_SPECIAL_FLOATS,
    YAML_STYLE_FLOAT,
    go_float_text,
    go_format_float,
    go_parse_float,
    go_parse_int,
    needs_double_quotes,
    sorted_keys,
)

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class YAMLError(ValueError):
    """A document that is not valid YAML, holds a duplicate key, or exceeds the reading bounds."""


MAX_DEPTH = 200
MAX_NODES = 1_000_000
# yaml.v3 (decode.go): past 100 aliased nodes and 1,000 decoded ones, the aliased share may not
# exceed 99% up to 400,000 decoded nodes, falling linearly to 10% at 4,000,000.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


# --------------------------------------------------------------------------------------------
# Loading (yaml.v3 semantics)
# --------------------------------------------------------------------------------------------

_V3_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_V3_NULLS = {"", "~", "null", "Null", "NULL"}


def _resolve_v3_plain(text: str) -> Any:
    """The value yaml.v3 gives an untagged plain scalar when decoding into interface{}."""
    if text in _V3_BOOLS:
        return _V3_BOOLS[text]
    if text in _V3_NULLS:
        return None
    if text in V3_SPECIAL_FLOATS:
        return V3_SPECIAL_FLOATS[text]
    first = text[0]
    if first == ".":
        value = go_parse_float(text)
        return text if value is None else value
    if first in "+-0123456789":
        plain = text.replace("_", "")
        as_int = go_parse_int(plain)
        if as_int is not None:
            return as_int
        if YAML_STYLE_FLOAT.match(plain):
            value = go_parse_float(plain)
            if value is not None:
                return value
        low = plain.lower()
        if low.startswith("0b") or low.startswith("-0b"):
            pass  # already handled by go_parse_int
    return text


class _V3Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A loader with yaml.v3's scalar resolution and duplicate-key refusal."""

    stringify_keys = False  # a key that is not a string is refused (see _non_string_key)


_V3Loader.yaml_implicit_resolvers = {}
# The composer asks ``resolve`` only for a node that carries no tag (or the non-specific ``!``), so
# an untagged scalar gets a tag of its own, told apart from one the author tagged ``!!str``.
_IMPLICIT_SCALAR_TAG = "tag:farm.invalid,2026:implicit-scalar"
_DEFAULT_TAGS = {
    yaml.ScalarNode: _IMPLICIT_SCALAR_TAG,
    yaml.SequenceNode: "tag:yaml.org,2002:seq",
    yaml.MappingNode: "tag:yaml.org,2002:map",
}


def _resolve_default(self: _V3Loader, kind: type, value: Any, implicit: Any) -> str:
    """The composer's tag for an untagged node: with no implicit or path resolvers, always the
    default of its kind (what ``Resolver.resolve`` computes the long way for every node)."""
    return _DEFAULT_TAGS[kind]


def _no_path_resolution(self: _V3Loader, *args: Any) -> None:
    """Path resolvers are never registered, so the per-node descend/ascend bookkeeping is moot."""


_V3Loader.resolve = _resolve_default
_V3Loader.descend_resolver = _no_path_resolution
_V3Loader.ascend_resolver = _no_path_resolution


def _construct_scalar(loader: _V3Loader, node: yaml.ScalarNode) -> Any:
    value = node.value
    if node.style in ("'", '"', "|", ">"):
        return value
    return _resolve_v3_plain(value)


def _construct_tagged_str(loader: _V3Loader, node: yaml.ScalarNode) -> Any:
    return node.value


# yaml.v3's resolve(tag, in) for an explicitly tagged scalar: the text is resolved as a plain one
# (whatever its quoting) and must give the tag's type; an int is accepted as a !!float.
_TAG_TYPES: dict[str, tuple[str, Any]] = {
    "tag:yaml.org,2002:int": ("!!int", int),
    "tag:yaml.org,2002:float": ("!!float", float),
    "tag:yaml.org,2002:bool": ("!!bool", bool),
    "tag:yaml.org,2002:null": ("!!null", type(None)),
}


def _v3_short_tag(value: Any) -> str:
    if value is None:
        return "!!null"
    if isinstance(value, bool):
        return "!!bool"
    if isinstance(value, int):
        return "!!int"
    return "!!float" if isinstance(value, float) else "!!str"


def _construct_typed(loader: _V3Loader, node: yaml.ScalarNode) -> Any:
    short, wanted = _TAG_TYPES[node.tag]
    value = _resolve_v3_plain(node.value) if node.value else None
    if wanted is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, wanted) and (wanted is bool or not isinstance(value, bool)):
        return value
    raise YAMLError(
        f"yaml: line {node.start_mark.line + 1}: cannot decode {_v3_short_tag(value)} `{node.value}` as a {short}"
    )


def _by_kind(scalar: Any) -> Any:
    """A constructor for a tag that yaml.v3 reads by the node's kind: a tagged mapping or sequence
    decodes as a mapping or sequence whatever the tag says (``!!str {a: 1}`` is a mapping), and a
    scalar goes to ``scalar``."""

    def construct(loader: _V3Loader, node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            return _construct_mapping(loader, node)
        if isinstance(node, yaml.SequenceNode):
            return _construct_sequence(loader, node)
        return scalar(loader, node)

    return construct


def _construct_binary(loader: _V3Loader, node: yaml.ScalarNode) -> str:
    """yaml.v3 decodes ``!!binary`` into a string of the decoded bytes."""
    try:
        return base64.b64decode("".join(node.value.split()), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise YAMLError(
            f"yaml: line {node.start_mark.line + 1}: !!binary value is not base64 of UTF-8 text"
        ) from None


def _construct_mapping(loader: _V3Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (dict, list)):
            raise YAMLError(f"line {key_node.start_mark.line + 1}: invalid map key")
        if not isinstance(key, str):
            key = _non_string_key(loader, key_node, key)
        if key in result:
            raise YAMLError(
                f"yaml: line {key_node.start_mark.line + 1}: mapping key {key!r} already defined"
                f" at line {_key_line(node, key, loader) + 1}"
            )
        result[key] = loader.construct_object(value_node, deep=True)
    return result


def _non_string_key(loader: _V3Loader, key_node: yaml.Node, key: Any) -> str:
    """A key that reads as a number, a boolean or null. Every object the farm writes is JSON, whose
    keys are strings: a manifest source is read as kure's parser reads it (sigs.k8s.io/yaml), where
    such a key becomes its string form; a launcher document refuses it, naming the line."""
    if loader.stringify_keys:
        if isinstance(key, bool):
            return "true" if key else "false"
        return "null" if key is None else str(key)
    raise YAMLError(
        f"yaml: line {key_node.start_mark.line + 1}: mapping key {key_node.value or 'null'} is not a string; "
        f'quote it ("{key_node.value}")'
    )


def _key_line(node: yaml.MappingNode, key: Any, loader: _V3Loader) -> int:
    for key_node, _ in node.value:
        if loader.construct_object(key_node, deep=True) == key:
            return key_node.start_mark.line
    return node.start_mark.line


def _construct_sequence(loader: _V3Loader, node: yaml.SequenceNode) -> list[Any]:
    return [loader.construct_object(child, deep=True) for child in node.value]


# Untagged scalars, plain and quoted, arrive with the implicit tag; the node's style tells them
# apart. A tagged one follows yaml.v3: !!str is the text, !!int/!!float/!!bool/!!null must resolve
# to their type, and a tag that names no scalar type (!!map, !!seq, !!set, ...) leaves the text.
_V3Loader.add_constructor(_IMPLICIT_SCALAR_TAG, _construct_scalar)
_V3Loader.add_constructor("tag:yaml.org,2002:str", _by_kind(_construct_tagged_str))
for _tag in _TAG_TYPES:
    _V3Loader.add_constructor(_tag, _by_kind(_construct_typed))
_V3Loader.add_constructor("tag:yaml.org,2002:timestamp", _by_kind(_construct_tagged_str))
_V3Loader.add_constructor("tag:yaml.org,2002:binary", _by_kind(_construct_binary))
for _tag in ("map", "seq", "set", "omap", "pairs"):
    _V3Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _by_kind(_construct_tagged_str))


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _check_bounds(root: yaml.Node, budget: int = MAX_NODES) -> int:
    """Walk the composed document as a decoder would (every alias expanded where it is used),
    without recursion; refuse it past the bounds. Returns the number of nodes decoded.

    PyYAML composes an alias as the anchored node itself, so a collection met a second time is an
    alias use, and everything under it counts as decoded through an alias. Scalars are counted
    with their collection and never pushed, which keeps the walk cheap beside construction."""
    decoded, aliased = 1, 0
    seen: set[int] = set()
    scalar, sequence = yaml.ScalarNode, yaml.SequenceNode
    stack: list[tuple[yaml.Node, int, bool]] = [] if type(root) is scalar else [(root, 1, False)]
    while stack:
        node, depth, in_alias = stack.pop()
        if id(node) in seen:
            in_alias = True
            aliased += 1
        else:
            seen.add(id(node))
        children = node.value if type(node) is sequence else [part for pair in node.value for part in pair]
        decoded += len(children)
        if in_alias:
            aliased += len(children)
        if decoded > budget:
            raise YAMLError(f"yaml: document is larger than {MAX_NODES} nodes")
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            raise YAMLError("yaml: document contains excessive aliasing")
        depth += 1
        for child in reversed(children):
            if type(child) is not scalar:
                if depth >= MAX_DEPTH:
                    raise YAMLError(
                        f"yaml: line {child.start_mark.line + 1}: nesting deeper than {MAX_DEPTH} levels"
                    )
                stack.append((child, depth, in_alias))
    return decoded


def load(data: bytes | str, *, source: str = "<input>", memo: DocumentMemo | None = None) -> Any:
    """Parse the first YAML document of ``data`` with yaml.v3 semantics.

    An empty input yields None. Errors name ``source``. With ``memo``, a document already parsed
    there is not parsed again (the caller gets its own copy, as from a new parse).
    """
    if memo is not None:
        return memo.load(data, source)
    return _parse(data, source)


def _parse(data: bytes | str, source: str) -> Any:
    loader = _V3Loader(data)
    try:
        if not loader.check_node():
            return None
        node = loader.get_node()
        if node is None:
            return None
        _check_bounds(node)
        return loader.construct_document(node)
    except YAMLError as exc:
        raise YAMLError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise YAMLError(f"{source}: {_describe_yaml_error(exc)}") from None
    except RecursionError:  # the pure-Python composer, when libyaml is missing
        raise YAMLError(f"{source}: yaml: nesting deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


class DocumentMemo:
    """The documents already parsed, by their bytes and source, so a process that renders many
    requests sharing documents (the targets of one application, a fleet's ClusterProfiles) parses
    each once.

    ``load`` hands out a fresh copy of the parsed containers every time, sharing what the parse
    shared (an alias), so a caller may change what it gets exactly as it could a new parse. A
    failed parse is not kept (it raises again, parsed again). Bounded: documents over
    ``max_document_bytes`` are never kept, and the least recently used go once the kept sources
    pass ``max_bytes`` in all.
    """

    def __init__(self, max_bytes: int = 8 << 20, max_document_bytes: int = 256 << 10) -> None:
        self.max_bytes, self.max_document_bytes = max_bytes, max_document_bytes
        self._parsed: dict[tuple[str, bytes | str], Any] = {}  # insertion order = recency
        self._bytes = 0

    def load(self, data: bytes | str, source: str) -> Any:
        key = (source, data)
        try:
            parsed = self._parsed.pop(key)
        except KeyError:
            parsed = _parse(data, source)
            if len(data) > self.max_document_bytes:
                return parsed
            self._bytes += len(data)
            while self._bytes > self.max_bytes and self._parsed:
                oldest = next(iter(self._parsed))
                del self._parsed[oldest]
                self._bytes -= len(oldest[1])
        self._parsed[key] = parsed  # the most recently used last
        return _fresh_copy(parsed, {})


def _fresh_copy(value: Any, copies: dict[int, Any]) -> Any:
    """A copy of the dicts and lists of a parse (its scalars are immutable), keeping shared
    containers shared."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return value
    copied = copies.get(id(value))
    if copied is not None:
        return copied
    if kind is dict:
        copied = copies[id(value)] = {}
        for key, item in value.items():
            copied[key] = _fresh_copy(item, copies)
    else:
        copied = copies[id(value)] = []
        copied.extend(_fresh_copy(item, copies) for item in value)
    return copied


# A line that starts a document or ends one: where a later document could begin.
_DOCUMENT_MARKER = re.compile(rb"^(?:---|\.\.\.)(?=[ \t\r\n]|\Z)", re.MULTILINE)
_CONTENT_EVENTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.AliasEvent)


def has_later_document(data: bytes) -> bool:
    """Whether ``data`` holds a document with content after its first, which ``load`` does not
    read. Only a stream with a document marker past its first byte is parsed, as events (no alias
    is expanded); an error inside the first document is ``load``'s to report."""
    if _DOCUMENT_MARKER.search(data, 1) is None:
        return False
    documents = 0
    try:
        for event in yaml.parse(data, Loader=_BaseLoader):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
            elif documents > 1 and (
                isinstance(event, _CONTENT_EVENTS) or (isinstance(event, yaml.ScalarEvent) and event.value)
            ):
                return True
    except yaml.YAMLError:
        return documents > 1
    return False


class _ManifestLoader(_V3Loader):
    """The loader of a manifest source: a key that is not a string becomes its string form, and an
    integer an int64 cannot hold is a float (kure's parser reads a document into an unstructured
    object, whose numbers are int64 or float64)."""

    stringify_keys = True


def _construct_manifest_scalar(loader: _ManifestLoader, node: yaml.ScalarNode) -> Any:
    value = _construct_scalar(loader, node)
    if type(value) is int and not -(2**63) <= value < 2**63:
        return float(value)
    return value


_ManifestLoader.add_constructor(_IMPLICIT_SCALAR_TAG, _construct_manifest_scalar)


def load_all(data: bytes | str, *, source: str = "<input>", manifest: bool = False) -> list[Any]:
    """Every YAML document of ``data``, yaml.v3 semantics; empty documents are skipped. With
    ``manifest`` (a manifest source's objects), read as kure's parser reads them: a key that is
    not a string becomes its string form and an integer an int64 cannot hold is a float."""
    loader = _ManifestLoader(data) if manifest else _V3Loader(data)
    documents: list[Any] = []
    budget = MAX_NODES  # shared by every document of the stream
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                budget -= _check_bounds(node, budget)
                document = loader.construct_document(node)
                if document is not None:
                    documents.append(document)
        return documents
    except YAMLError as exc:
        raise YAMLError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise YAMLError(f"{source}: {_describe_yaml_error(exc)}") from None
    except RecursionError:
        raise YAMLError(f"{source}: yaml: nesting deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def _describe_yaml_error(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.reader.ReaderError):  # its str() spans lines
        return f"yaml: position {exc.position}: {exc.reason} (character #x{_code(exc.character)})"
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"yaml: line {mark.line + 1}: {problem}"
    return f"yaml: {problem}"


def _code(character: int | str) -> str:
    return f"{character if isinstance(character, int) else ord(character):04x}"


# --------------------------------------------------------------------------------------------
# Dumping (encoding/json + sigs.k8s.io/yaml + yaml.v2)
# --------------------------------------------------------------------------------------------


class _FarmDumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Every scalar is tagged as a string and its style is decided here (quoting for strings that
    would read back as another type, plain for numbers, booleans and null), so the serializer
    needs no implicit resolvers: an empty table keeps its per-scalar tag resolution trivial."""


_FarmDumper.yaml_implicit_resolvers = {}
_STR_TAG = "tag:yaml.org,2002:str"


def _represent_str(dumper: _FarmDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        style = "|"
    elif value == "" or needs_double_quotes(value):
        style = '"'
    else:
        style = None
    return yaml.ScalarNode(_STR_TAG, value, style=style)


def _represent_bool(dumper: _FarmDumper, value: bool) -> yaml.ScalarNode:
    return yaml.ScalarNode(_STR_TAG, "true" if value else "false")


def _represent_int(dumper: _FarmDumper, value: int) -> yaml.ScalarNode:
    return yaml.ScalarNode(_STR_TAG, str(value))


def _represent_float(dumper: _FarmDumper, value: float) -> yaml.ScalarNode:
    # Go's JSON round trip (encoding/json, then sigs.k8s.io/yaml) turns a whole float into an int
    # where an int64 or a uint64 holds its digits.
    if math.isfinite(value):
        return yaml.ScalarNode(_STR_TAG, go_float_text(value))
    return yaml.ScalarNode(_STR_TAG, go_format_float(value))


def _represent_none(dumper: _FarmDumper, value: None) -> yaml.ScalarNode:
    return yaml.ScalarNode(_STR_TAG, "null")


def _represent_dict(dumper: _FarmDumper, value: dict[str, Any]) -> yaml.MappingNode:
    pairs = []
    for key in sorted_keys(value):
        pairs.append((_represent_str(dumper, key), dumper.represent_data(value[key])))
    return yaml.MappingNode("tag:yaml.org,2002:map", pairs, flow_style=not value)


def _represent_list(dumper: _FarmDumper, value: list[Any]) -> yaml.SequenceNode:
    items = [dumper.represent_data(item) for item in value]
    return yaml.SequenceNode("tag:yaml.org,2002:seq", items, flow_style=not value)


_FarmDumper.add_representer(str, _represent_str)
_FarmDumper.add_representer(bool, _represent_bool)
_FarmDumper.add_representer(int, _represent_int)
_FarmDumper.add_representer(float, _represent_float)
_FarmDumper.add_representer(type(None), _represent_none)
_FarmDumper.add_representer(dict, _represent_dict)
_FarmDumper.add_representer(list, _represent_list)
_FarmDumper.add_representer(tuple, _represent_list)


_DUMP_OPTIONS: dict[str, Any] = {
    "Dumper": _FarmDumper,
    "default_flow_style": False,
    "allow_unicode": True,
    "width": 80,
    "indent": 2,
    "sort_keys": False,
}


def dump_document(obj: Any) -> str:
    """One YAML document exactly as the reference writes it (ends with one newline)."""
    written = _write_directly([obj])
    return written if written is not None else yaml.dump(obj, **_DUMP_OPTIONS)


def dump_documents(objects: Iterable[Any]) -> str:
    """Documents joined with ``---`` between them (none before the first), as the reference
    writes a build's output. One dumper serves every document."""
    documents = list(objects)
    if not documents:
        return ""
    written = _write_directly(documents)
    return written if written is not None else yaml.dump_all(documents, **_DUMP_OPTIONS)


def _write_directly(documents: list[Any]) -> str | None:
    """The documents through ``yamlemit``'s direct writer, or None when it declines any of them
    (then PyYAML writes them all, so no document boundary depends on which path wrote it)."""
    parts = []
    for document in documents:
        written = yamlemit.dump_document(document)
        if written is None:
            return None
        parts.append(written)
    return "---\n".join(parts)


class _UnsupportedValue(ValueError):
    """A value encoding/json refuses to marshal (NaN, ±Inf)."""


class _ManifestDumper(_FarmDumper):
    """The output dumper: the reference marshals every object with encoding/json first, which
    refuses NaN and infinities."""


def _represent_finite_float(dumper: _FarmDumper, value: float) -> yaml.ScalarNode:
    if not math.isfinite(value):
        raise _UnsupportedValue(value)
    return _represent_float(dumper, value)


_ManifestDumper.add_representer(float, _represent_finite_float)
_MANIFEST_OPTIONS = _DUMP_OPTIONS | {"Dumper": _ManifestDumper}


def dump_manifests(objects: Iterable[Any]) -> str:
    """A build's output (``dump_documents``); a NaN or infinity anywhere is a :class:`FieldError`
    naming the object and the path, as encoding/json refuses to marshal one."""
    documents = list(objects)
    if not documents:
        return ""
    written = _write_directly(documents)
    if written is not None:
        return written
    try:
        return yaml.dump_all(documents, **_MANIFEST_OPTIONS)
    except _UnsupportedValue:
        raise _unsupported_value_error(documents) from None


def _unsupported_value_error(documents: list[Any]) -> FieldError:
    for document in documents:
        found = non_finite_path(document, "")
        if found is not None:
            path, value = found
            return FieldError(
                f"{_describe_object(document)}{path}: json: unsupported value: {_go_float(value)}"
            )
    return FieldError("json: unsupported value")


def _describe_object(document: Any) -> str:
    if not isinstance(document, dict):
        return ""
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    return f'{document.get("kind", "object")} "{metadata.get("name", "")}": '


def non_finite_path(value: Any, path: str) -> tuple[str, float] | None:
    """The path of the first NaN or infinity in ``value`` (depth-first, in key order)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return where.lstrip(".") or "(document)", item
        if isinstance(item, dict):
            stack.extend((item[key], f"{where}.{key}") for key in reversed(list(item)))
        elif isinstance(item, (list, tuple)):
            stack.extend((entry, f"{where}[{index}]") for index, entry in reversed(list(enumerate(item))))
    return None


def _go_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"
