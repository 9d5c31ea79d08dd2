"""The kind-component engine: declarative field tables of upstream API types, a strict decoder that
writes what the Go type would write, and the ``kind_component`` factory.

A kind component (seed 002, "Kind inventory" and the per-kind entries) is a component type named
after one Kubernetes or operator kind whose properties are the object's spec (or its top-level
fields), decoded strictly into the upstream Go type. This module reproduces that decode and the
Go JSON encoding of the result, so a kind is a few lines: its field table and its own checks.

Field tables
------------
A Go struct is a :class:`Struct` of :class:`F` fields, written the way the Go source tags them::

    from farm.core.kinds.engine import F, Struct, STRING, INT32, list_of, map_of

    LABEL_SELECTOR_REQUIREMENT = Struct("LabelSelectorRequirement", [
        F("key", STRING, "req"),                 # json:"key" and the API requires it
        F("operator", STRING, "req"),
        F("values", list_of(STRING), "omit"),    # json:"values,omitempty"
    ])

Types: ``STRING``, ``INT32``, ``INT64``, ``BOOL``, ``FLOAT``, ``QUANTITY`` (canonicalised like
``resource.Quantity``), ``DURATION`` (``metav1.Duration``, written in Go spelling),
``INT_OR_STRING``, ``RAW`` (any JSON, carried as written: ``apiextensionsv1.JSON``,
``map[string]interface{}``), a :class:`Struct`, ``list_of(T)`` and ``map_of(T)`` (string keys), and
:class:`Custom` for a type that unmarshals itself (Cilium's rule labels and ICMP fields).
A struct that refers to itself (or to a struct defined later) takes a zero-argument callable
returning its fields instead of a list.

Flags, in the ``flags`` string (space-separated):

- ``omit``: the Go tag has ``omitempty``. A zero scalar, an empty list or map and a nil pointer are
  left out; a non-pointer struct (and Quantity, IntOrString, Duration, which are structs) never is.
  Without ``omit``, an unauthored field is written with its zero value (``""``, ``0``, ``false``,
  ``null`` for lists, maps and pointers, the zero struct for structs).
- ``ptr``: the Go field is a pointer, so an authored zero (``0``, ``false``, ``""``) is kept.
- ``req``: the API requires the field and the type writes it whether or not it was authored. It is
  refused, ``<path>: required (the <API> API requires this field)``, where its parent object was
  authored and the field was not (absent or null). An authored empty value satisfies it, except on an
  ``omit`` non-pointer field, where the type would drop the empty value: that is refused the same way.
- ``req!``: required and must not be empty: absent, null, ``""``, ``0``, ``[]`` and ``{}`` are all
  refused as missing (the seed's "refused omissions", e.g. a tcproute's ``rules``).

Keyword options of :class:`F`:

- ``default``: on an ``omit`` non-pointer field, the API default that would replace an authored zero.
  The zero is refused: ``<path>: "" cannot be carried by the <API> API types (the field is omitted
  when zero, so the API server would apply its default "<d>")``; pass the default as it should be
  printed (``'"TCP"'``, ``"-1"``). For a list the message says "omitted when empty".
- ``enum``: allowed values; anything else is refused ``<path>: unsupported value "x" (must be one
  of "A", "B")``. Strict decode does not check enums, so use this only where the seed says the kind
  refuses a value.

Decoding (:func:`decode_struct`)
--------------------------------
- A key matching no field, at any depth, is refused with its path: ``unknown field "rules[0].htp"``
  (a struct built with ``self_decoding=True``, the Cilium selectors, words it ``<path>: unknown
  field``). Keys match case-insensitively as Go's encoding/json does; two spellings of one field in
  one object are refused: ``storage.size: sets the same field as storage.Size (the decoder would keep
  only one)``.
- Null is absence. A null list element is refused: ``rules[0]: null is not a valid array element``;
  a null map value is left out.
- Wrong types are refused with the field helpers' wording: ``<path>: must be a string, got int``.

Kinds (:func:`kind_component`)
------------------------------
``kind_component(name, api_version, kind, go_type, spec=STRUCT)`` decodes the properties into
``spec``; ``body=STRUCT`` instead puts the decoded fields at the object's top level (object-typed
kinds: StorageClass, EndpointSlice, CiliumNetworkPolicy) and refuses ``kind``, ``apiVersion`` and
``metadata`` as not authorable. The properties ``objectName`` (the object's name, default the
component's), ``labels`` and ``annotations`` (the object's own metadata) are read before the decode.
``cluster_scoped=True`` writes no namespace. ``check(ctx: KindContext)`` runs the kind's own rules
after the decode; it sees the authored properties and the decoded output and raises ``FieldError``.
The returned :class:`~farm.core.registry.ComponentType` has ``status="kind"`` and
``decode="strict decode into <go_type>"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from farm.core.durations import DurationError, normalize_duration
from farm.core.errors import FieldError
from farm.core.fields import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, go_type_name, go_value_repr
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.quantity import QuantityError, canonical_quantity
from farm.core.registry import TIER_APPS, ComponentType

# --- API family wording ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Api:
    """How refusals name the API: ``the <name> API requires``, ``by the <name> API types``, and who
    applies defaults (``the API server``, or ``the operator``)."""

    name: str
    applier: str = "the API server"


KUBERNETES = Api("Kubernetes")
GATEWAY = Api("Gateway")
CILIUM = Api("Cilium")


# --- types ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scalar:
    """A leaf type. ``struct_like`` types are Go structs, so ``omitempty`` never drops them."""

    name: str
    zero: Any
    struct_like: bool = False


STRING = Scalar("string", "")
INT32 = Scalar("int32", 0)
INT64 = Scalar("int64", 0)
BOOL = Scalar("bool", False)
FLOAT = Scalar("float64", 0)
QUANTITY = Scalar("Quantity", "0", struct_like=True)
DURATION = Scalar("Duration", "0s", struct_like=True)
INT_OR_STRING = Scalar("IntOrString", 0, struct_like=True)
RAW = Scalar("JSON", None)


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class MapOf:
    value: Any


@dataclass(frozen=True)
class Custom:
    """A type that decodes itself (Go's ``UnmarshalJSON``): ``decode(value, path, api)`` returns the
    encoded value or raises ``FieldError``. Unauthored and not ``omit``, it is written as null."""

    name: str
    decode: Callable[[Any, str, Api], Any]


def list_of(item: Any) -> ListOf:
    return ListOf(item)


def map_of(value: Any) -> MapOf:
    return MapOf(value)


_FLAGS = frozenset({"omit", "ptr", "req", "req!"})


@dataclass(frozen=True)
class F:
    """One JSON field of a Go struct (see the module docstring for the flags)."""

    name: str
    type: Any
    flags: str = ""
    default: str | None = None
    enum: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.flags.split()) - _FLAGS
        if unknown:
            raise ValueError(f"field {self.name}: unknown flags {sorted(unknown)}")

    @property
    def omitempty(self) -> bool:
        return "omit" in self.flags.split()

    @property
    def pointer(self) -> bool:
        return "ptr" in self.flags.split()

    @property
    def required(self) -> bool:
        flags = self.flags.split()
        return "req" in flags or "req!" in flags

    @property
    def nonempty(self) -> bool:
        return "req!" in self.flags.split()


class Struct:
    """A Go struct: its JSON fields in declaration order. ``fields`` may be a callable returning the
    list, for types that refer to themselves or to types defined later."""

    def __init__(
        self,
        name: str,
        fields: Sequence[F] | Callable[[], Sequence[F]],
        *,
        self_decoding: bool = False,
    ) -> None:
        self.name = name
        self._fields = fields
        self._resolved: tuple[F, ...] | None = None
        self._by_fold: dict[str, F] = {}
        self.self_decoding = self_decoding

    @property
    def fields(self) -> tuple[F, ...]:
        if self._resolved is None:
            raw = self._fields() if callable(self._fields) else self._fields
            self._resolved = tuple(raw)
            self._by_fold = {f.name.lower(): f for f in self._resolved}
        return self._resolved

    def lookup(self, key: str) -> F | None:
        """The field a key lands in: the exact name, or one equal to it ignoring case (Go's rule)."""
        self.fields  # noqa: B018 - resolves the table
        for candidate in self._resolved or ():
            if candidate.name == key:
                return candidate
        return self._by_fold.get(key.lower())

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def __repr__(self) -> str:
        return f"Struct({self.name})"


# --- decoding ------------------------------------------------------------------------------------


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def required_error(path: str, api: Api) -> FieldError:
    return FieldError(f"{path}: required (the {api.name} API requires this field)")


def _is_empty(value: Any) -> bool:
    return (
        value is None
        or value == ""
        or value == []
        or value == {}
        or (not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0)
        or value is False
    )


def _is_go_zero(value: Any, kind: Any) -> bool:
    """What Go's omitempty drops for a non-pointer field."""
    if isinstance(kind, Struct) or (isinstance(kind, Scalar) and kind.struct_like):
        return False
    if isinstance(kind, (ListOf, MapOf)):
        return value is None or len(value) == 0
    return _is_empty(value)


def zero_value(kind: Any) -> Any:
    """What Go writes for an unauthored non-omitempty, non-pointer field of this type."""
    if isinstance(kind, Struct):
        return _zero_struct(kind)
    if isinstance(kind, (ListOf, MapOf, Custom)):
        return None
    return kind.zero


def _zero_struct(struct: Struct) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in struct.fields:
        if f.pointer:
            if not f.omitempty:
                out[f.name] = None
            continue
        if f.omitempty and not (isinstance(f.type, Struct) or getattr(f.type, "struct_like", False)):
            continue
        out[f.name] = zero_value(f.type)
    return out


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _decode_int(value: Any, path: str, low: int, high: int, bits: int) -> int:
    number = _whole(value)
    if number is None:
        if isinstance(value, float):
            raise FieldError(f"{path}: must be a whole number, got {go_value_repr(value)}")
        raise FieldError(f"{path}: must be an integer, got {go_type_name(value)}")
    if not low <= number <= high:
        raise FieldError(f"{path}: must be an integer within int{bits} range, got {number}")
    return number


def _decode_scalar(value: Any, kind: Scalar, path: str) -> Any:
    name = kind.name
    if name == "string":
        if not isinstance(value, str):
            raise FieldError(f"{path}: must be a string, got {go_type_name(value)}")
        return value
    if name == "int32":
        return _decode_int(value, path, INT32_MIN, INT32_MAX, 32)
    if name == "int64":
        return _decode_int(value, path, INT64_MIN, INT64_MAX, 64)
    if name == "bool":
        if not isinstance(value, bool):
            raise FieldError(f"{path}: must be a boolean, got {go_type_name(value)}")
        return value
    if name == "float64":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FieldError(f"{path}: must be a number, got {go_type_name(value)}")
        return int(value) if isinstance(value, float) and value.is_integer() else value
    if name == "Quantity":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise FieldError(f"{path}: must be a quantity, got {go_type_name(value)}")
        try:
            return canonical_quantity(value)
        except QuantityError as exc:
            raise FieldError(f"{path}: {exc}") from None
    if name == "Duration":
        if not isinstance(value, str):
            raise FieldError(f"{path}: must be a duration string, got {go_type_name(value)}")
        try:
            return normalize_duration(value)
        except DurationError as exc:
            raise FieldError(f"{path}: {exc}") from None
    if name == "IntOrString":
        if isinstance(value, str):
            return value
        return _decode_int(value, path, INT32_MIN, INT32_MAX, 32)
    return value  # RAW: carried as written


def decode_value(value: Any, kind: Any, path: str, api: Api) -> Any:
    """The encoded form of one authored (non-null) value of ``kind``."""
    if isinstance(kind, Struct):
        if not isinstance(value, dict):
            raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
        return decode_struct(value, kind, path, api)
    if isinstance(kind, Custom):
        return kind.decode(value, path, api)
    if isinstance(kind, ListOf):
        if not isinstance(value, list):
            raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
        items = []
        for index, item in enumerate(value):
            item_path = f"{path}[{index}]"
            if item is None:
                raise FieldError(f"{item_path}: null is not a valid array element")
            items.append(decode_value(item, kind.item, item_path, api))
        return items
    if isinstance(kind, MapOf):
        if not isinstance(value, dict):
            raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
        return {
            str(k): decode_value(v, kind.value, join(path, str(k)), api)
            for k, v in value.items()
            if v is not None
        }
    return _decode_scalar(value, kind, path)


def _unknown_field(struct: Struct, path: str, key: str) -> FieldError:
    if struct.self_decoding:
        return FieldError(f"{join(path, key)}: unknown field")
    return FieldError(f'unknown field "{join(path, key)}"')


def match_keys(props: dict[str, Any], struct: Struct, path: str) -> dict[str, tuple[str, Any]]:
    """Each authored key assigned to its field (by JSON name): unknown keys and second spellings
    refused. Keys are visited in sorted order, so the message is stable."""
    assigned: dict[str, tuple[str, Any]] = {}
    for key in sorted(props, key=str):
        target = struct.lookup(str(key))
        if target is None:
            raise _unknown_field(struct, path, str(key))
        if target.name in assigned:
            first = assigned[target.name][0]
            raise FieldError(
                f"{join(path, str(key))}: sets the same field as {join(path, first)} "
                "(the decoder would keep only one)"
            )
        assigned[target.name] = (str(key), props[key])
    return assigned


def _defaulted_zero_error(f: F, value: Any, path: str, api: Api) -> FieldError:
    shown = "[]" if isinstance(value, list) else ('""' if value == "" else go_value_repr(value))
    what = "empty" if isinstance(value, list) else "zero"
    return FieldError(
        f"{path}: {shown} cannot be carried by the {api.name} API types (the field is omitted "
        f"when {what}, so {api.applier} would apply its default {f.default})"
    )


def _check_enum(f: F, value: Any, path: str) -> None:
    if f.enum is not None and value not in f.enum:
        allowed = ", ".join(f'"{v}"' for v in f.enum)
        raise FieldError(f'{path}: unsupported value "{go_value_repr(value)}" (must be one of {allowed})')


def decode_struct(props: dict[str, Any], struct: Struct, path: str, api: Api) -> dict[str, Any]:
    """Strictly decode an authored object into ``struct`` and return what Go would encode."""
    assigned = match_keys(props, struct, path)
    out: dict[str, Any] = {}
    for f in struct.fields:
        field_path = join(path, f.name)
        _, value = assigned.get(f.name, (None, None))
        if value is None:
            if f.required:
                raise required_error(field_path, api)
            if f.pointer:
                if not f.omitempty:
                    out[f.name] = None
            elif not f.omitempty or isinstance(f.type, Struct) or getattr(f.type, "struct_like", False):
                out[f.name] = zero_value(f.type)
            continue
        encoded = decode_value(value, f.type, field_path, api)
        _check_enum(f, encoded, field_path)
        if f.nonempty and _is_empty(encoded):
            raise required_error(field_path, api)
        if f.omitempty and not f.pointer and _is_go_zero(encoded, f.type):
            if f.default is not None:
                raise _defaulted_zero_error(f, value, field_path, api)
            if f.required:
                raise required_error(field_path, api)
            continue
        out[f.name] = encoded
    return out


# --- kind components ------------------------------------------------------------------------------

RESERVED_PROPERTIES = ("objectName", "labels", "annotations")
NOT_AUTHORABLE = (
    "not authorable: launcher sets the object's kind, apiVersion and metadata (its name is the "
    "component's, or the one objectName gives it; its labels and annotations are the labels and "
    "annotations properties)"
)
_OBJECT_KEYS = ("kind", "apiversion", "metadata")


@dataclass
class KindContext:
    """What a kind's own check sees: the authored properties (without objectName, labels and
    annotations), the decoded output (the spec, or the object's top-level fields) and the object."""

    component: ComponentSpec
    build: BuildContext
    authored: dict[str, Any]
    decoded: dict[str, Any]
    obj: dict[str, Any] = field(default_factory=dict)


def _string_map(props: dict[str, Any], key: str) -> dict[str, str]:
    value = props.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FieldError(f"{key}: must be an object, got {go_type_name(value)}")
    out = {}
    for k, v in value.items():
        if v is None:
            continue
        if not isinstance(v, str):
            raise FieldError(f"{key}.{k}: must be a string, got {go_type_name(v)}")
        out[str(k)] = v
    return out


def object_metadata(component: ComponentSpec, ctx: BuildContext, cluster_scoped: bool) -> dict[str, Any]:
    """The object's metadata: its name (objectName or the component's), namespace when namespaced,
    and the authored labels and annotations."""
    props = component.properties
    name = props.get("objectName")
    if name is not None and not isinstance(name, str):
        raise FieldError(f"objectName: must be a string, got {go_type_name(name)}")
    metadata: dict[str, Any] = {"name": name or component.name}
    if not cluster_scoped:
        metadata["namespace"] = ctx.namespace
    labels = _string_map(props, "labels")
    annotations = _string_map(props, "annotations")
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def authored_properties(component: ComponentSpec) -> dict[str, Any]:
    return {k: v for k, v in component.properties.items() if k not in RESERVED_PROPERTIES}


def refuse_object_keys(props: dict[str, Any]) -> None:
    for key in sorted(props, key=str):
        if str(key).lower() in _OBJECT_KEYS:
            raise FieldError(f"{key}: {NOT_AUTHORABLE}")


KindCheck = Callable[[KindContext], None]


def kind_component(
    name: str,
    api_version: str,
    kind: str,
    go_type: str,
    *,
    spec: Struct | None = None,
    body: Struct | None = None,
    cluster_scoped: bool = False,
    api: Api = KUBERNETES,
    check: KindCheck | None = None,
    tier: str = TIER_APPS,
) -> ComponentType:
    """A registry ``ComponentType`` for a kind component (see the module docstring)."""
    if (spec is None) == (body is None):
        raise ValueError(f"{name}: give exactly one of spec and body")

    def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
        authored = authored_properties(component)
        metadata = object_metadata(component, ctx, cluster_scoped)
        obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
        if body is not None:
            refuse_object_keys(authored)
            decoded = decode_struct(authored, body, "", api)
            obj.update(decoded)
        else:
            assert spec is not None
            decoded = decode_struct(authored, spec, "", api)
            obj["spec"] = decoded
        if check is not None:
            check(KindContext(component, ctx, authored, decoded, obj))
        return Generated(objects=[obj])

    return ComponentType(
        name=name,
        build=build,
        emits=(f"{api_version} {kind}",),
        decode=f"strict decode into {go_type}",
        status="kind",
        tier=tier,
        cluster_scoped=cluster_scoped,
    )
