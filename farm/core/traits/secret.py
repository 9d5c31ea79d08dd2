"""The secret trait: a v1 Secret named by ``name``, attached to another component, the twin of the
secret component (seed 002, secret): the same four properties through the same parser and
generator, so the same properties give the same Secret and the same refusals on both paths. Only
the ownership fields differ. It claims no name, so it meets a secret component of the same name
among the generated objects."""

from __future__ import annotations

from typing import Any

from farm.core.components.configmap import check_keys
from farm.core.components.secret import (
    SECRET_KEYS,
    check_explicit_secret_policy,
    generate_secret,
    parse_secret_properties,
)
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import COMMON_KEYS, app_labels, check_rendering_keys, required_string

KEYS = SECRET_KEYS | COMMON_KEYS | {"name"}


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """The secret capability takes no rendering keys."""
    check_rendering_keys(rendering, (), "secret")
    return rendering


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_keys(props, KEYS)
    name = required_string(props, "name")
    config = parse_secret_properties(props)
    check_explicit_secret_policy(app.ctx.policy)
    return [generate_secret(config, name, app.ctx.namespace, app_labels(app.component.name))]


HANDLER = TraitType(
    name="secret",
    apply=apply,
    capability="none",
    validate_rendering=validate_rendering,
    emits=("v1 Secret",),
)
