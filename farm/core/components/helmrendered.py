"""What a chart renders, read back: seed 002, helmtemplate, "Rendered objects" and "Output order".

The rendered stream is read as YAML 1.1, as kure's parser reads it (an unquoted ``yes`` is a
boolean, a non-string key becomes its string form, an unquoted timestamp stays a string). Empty,
null and comment-only documents are skipped; a scalar, a sequence, ``{}`` or a mapping without
apiVersion and kind is an error. A list document (a kind ending in ``List`` that states items) is
replaced by its items, up to eight lists deep; an item that leaves apiVersion or kind out takes the
list's apiVersion and the list's kind without ``List`` (a ``v1 List`` gives none). A list with
metadata of its own, or with a ``helm.sh/hook`` annotation on itself or an item, is an error.

Hooks: objects are ordered by (phase, weight) in the order pre-install, pre-upgrade, the chart's
main objects, post-install, post-upgrade, then unknown phases alphabetically; a multi-event hook
goes with its earliest phase, and delete, rollback and test hooks are dropped. Our reading where
the seed is silent: a standalone ``helm.sh/hook-weight`` orders an object among the main objects,
a weight that is no integer counts as 0 (as Helm reads it), objects of one (phase, weight) keep the
chart's render order, and ``test-success``/``test-failure`` (Helm's old names of ``test``) are
dropped with it.
"""

from __future__ import annotations

from typing import Any

import yaml

from farm.core.fields import go_type_name

HOOK = "helm.sh/hook"
HOOK_WEIGHT = "helm.sh/hook-weight"
PHASES = ("pre-install", "pre-upgrade", "main", "post-install", "post-upgrade")
DROPPED_PHASES = frozenset(
    {"pre-delete", "post-delete", "pre-rollback", "post-rollback", "test", "test-success", "test-failure"}
)
MAX_LIST_DEPTH = 8
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DecodeError(ValueError):
    """A rendered stream that cannot be read back; the text follows ``decoding rendered manifests: ``."""


class _ChartLoader(_Loader):  # type: ignore[misc, valid-type]
    """YAML 1.1 without timestamps: an unquoted date stays the string the chart wrote."""


_ChartLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _Loader.yaml_implicit_resolvers.items()
}


def _string_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return key if isinstance(key, str) else str(key)


def _construct_mapping(loader: _ChartLoader, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
    loader.flatten_mapping(node)
    mapping: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        mapping[_string_key(key)] = loader.construct_object(value_node, deep=True)
    return mapping


_ChartLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def load_stream(manifests: bytes) -> list[Any]:
    """Every non-empty document of the rendered stream."""
    try:
        documents = list(yaml.load_all(manifests.decode("utf-8"), Loader=_ChartLoader))
    except UnicodeDecodeError:
        raise DecodeError("the rendered manifests are not UTF-8 text") from None
    except yaml.YAMLError as exc:
        raise DecodeError(" ".join(str(exc).split())) from None
    return [document for document in documents if document is not None]


# --- documents and lists --------------------------------------------------------------------


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _label(obj: dict[str, Any]) -> str:
    name = _metadata(obj).get("name")
    return f'{obj.get("kind")} "{name if isinstance(name, str) else ""}"'


def _check_folded_keys(obj: dict[str, Any], exact: tuple[str, ...], where: str) -> None:
    for key in obj:
        for wanted in exact:
            if key != wanted and key.lower() == wanted.lower():
                raise DecodeError(
                    f'{where}the key "{key}" equals "{wanted}" only after case folding; write it "{wanted}" '
                    "or remove it"
                )


def _is_list(obj: dict[str, Any]) -> bool:
    return str(obj.get("kind")).endswith("List") and isinstance(obj.get("items"), list)


def _has_hook(obj: Any, depth: int = 0) -> bool:
    """A hook annotation on a list (under any case of ``metadata``, as Helm reads it) or an item."""
    if not isinstance(obj, dict) or depth > MAX_LIST_DEPTH:
        return False
    for key, metadata in obj.items():
        if key.lower() == "metadata" and isinstance(metadata, dict):
            annotations = metadata.get("annotations")
            if isinstance(annotations, dict) and (HOOK in annotations or HOOK_WEIGHT in annotations):
                return True
    items = obj.get("items")
    return isinstance(items, list) and any(_has_hook(item, depth + 1) for item in items)


def _check_list_metadata(obj: dict[str, Any], where: str) -> None:
    if _has_hook(obj):
        raise DecodeError(
            f"{where}{_label(obj)}: a list where a {HOOK} annotation is involved cannot be rendered: Helm reads "
            "a hook on a rendered document's own metadata only, so the list's items would be applied as "
            "ordinary objects; render each hook object as a document of its own"
        )
    metadata = _metadata(obj)
    kept = [
        f"{field} {', '.join(sorted(metadata[field]))}"
        for field in ("annotations", "labels")
        if isinstance(metadata.get(field), dict) and metadata[field]
    ]
    if kept:
        raise DecodeError(
            f"{where}List has metadata of its own that its items cannot keep: {'; '.join(kept)}"
        )


def _inherit(item: dict[str, Any], parent: dict[str, Any]) -> dict[str, Any]:
    kind = str(parent["kind"])
    if kind == "List" and parent["apiVersion"] == "v1":
        return item
    inherited = dict(item)
    inherited.setdefault("apiVersion", parent["apiVersion"])
    inherited.setdefault("kind", kind.removesuffix("List"))
    return inherited


def _expand(document: Any, where: str, depth: int) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        raise DecodeError(f"{where}not an object: {go_type_name(document)}")
    _check_folded_keys(document, ("apiVersion", "kind"), where)
    kind, api_version = document.get("kind"), document.get("apiVersion")
    if not isinstance(kind, str) or not kind or not isinstance(api_version, str) or not api_version:
        raise DecodeError(f"{where}an object needs apiVersion and kind")
    if kind.endswith("List"):
        _check_folded_keys(document, ("items",), where)
    if not _is_list(document):
        if isinstance(document.get("items"), list):
            raise DecodeError(
                f"{where}{_label(document)}: an items array on an object of a kind that is no list "
                f"({api_version} {kind}) is read as a list by what applies the output, which would apply its "
                "entries in the object's place; write the entries as documents of their own, or give the "
                "object a kind ending in List"
            )
        if kind == "List" and api_version == "v1":
            return []
        return [document]
    if depth >= MAX_LIST_DEPTH:
        raise DecodeError(f"{where}{kind} is nested more than {MAX_LIST_DEPTH} lists deep")
    _check_list_metadata(document, where)
    objects: list[dict[str, Any]] = []
    for index, item in enumerate(document["items"]):
        here = f"{where}item {index} of {kind}: "
        if item is None:
            raise DecodeError(f"{here}the item is null, not an object")
        if not isinstance(item, dict):
            raise DecodeError(f"{here}not an object: {go_type_name(item)}")
        objects.extend(_expand(_inherit(item, document), here, depth + 1))
    return objects


def decode(manifests: bytes) -> list[dict[str, Any]]:
    """The rendered objects, lists opened, in render order."""
    objects: list[dict[str, Any]] = []
    for index, document in enumerate(load_stream(manifests)):
        identified = isinstance(document, dict) and all(
            isinstance(document.get(key), str) and document[key] for key in ("apiVersion", "kind")
        )
        where = "" if identified else f"document {index + 1}: "
        objects.extend(_expand(document, where, 0))
    return objects


# --- hooks ----------------------------------------------------------------------------------


def _phase_rank(phase: str) -> tuple[int, str]:
    return (PHASES.index(phase), "") if phase in PHASES else (len(PHASES), phase)


def _weight(value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        return 0


def _hook_position(obj: dict[str, Any]) -> tuple[tuple[int, str], int] | None:
    """(phase rank, weight), or None for an object of a dropped hook."""
    annotations = _metadata(obj).get("annotations")
    annotations = annotations if isinstance(annotations, dict) else {}
    weight = _weight(annotations.get(HOOK_WEIGHT, 0))
    phases = [phase.strip() for phase in str(annotations.get(HOOK) or "").split(",") if phase.strip()]
    if not phases:
        return _phase_rank("main"), weight
    kept = [phase for phase in phases if phase not in DROPPED_PHASES]
    if not kept:
        return None
    return min(_phase_rank(phase) for phase in kept), weight


def order_by_hooks(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects in hook-execution order, dropped hooks left out (a stable sort)."""
    placed = [(position, obj) for obj in objects if (position := _hook_position(obj)) is not None]
    return [obj for _, obj in sorted(placed, key=lambda pair: pair[0])]
