"""Field tables of apimachinery types many kinds embed (metav1.LabelSelector and friends), and the
label-selector match-expression check ("A label selector's match expressions")."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds.engine import STRING, F, Struct, list_of, map_of

LABEL_SELECTOR_REQUIREMENT = Struct(
    "LabelSelectorRequirement",
    [
        F("key", STRING, "req"),
        F("operator", STRING, "req"),
        F("values", list_of(STRING), "omit"),
    ],
)

LABEL_SELECTOR = Struct(
    "LabelSelector",
    [
        F("matchLabels", map_of(STRING), "omit"),
        F("matchExpressions", list_of(LABEL_SELECTOR_REQUIREMENT), "omit"),
    ],
)

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def check_match_expressions(selector: dict[str, Any] | None, path: str) -> None:
    """The API's rules for a decoded label selector's match expressions: an operator of the four,
    and values that go with it (at least one for In/NotIn, none for Exists/DoesNotExist)."""
    if not selector:
        return
    for index, expression in enumerate(selector.get("matchExpressions") or []):
        where = f"{path}.matchExpressions[{index}]"
        operator = expression.get("operator", "")
        values = expression.get("values") or []
        if operator not in OPERATORS:
            raise FieldError(
                f'{where}.operator: unsupported value "{operator}" (must be one of {", ".join(OPERATORS)})'
            )
        if operator in ("In", "NotIn") and not values:
            raise FieldError(f"{where}.values: required with the operator {operator} (at least one value)")
        if operator in ("Exists", "DoesNotExist") and values:
            raise FieldError(f"{where}.values: must be empty with the operator {operator}")
