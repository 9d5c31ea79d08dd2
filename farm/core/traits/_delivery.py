"""Delivery-intent traits (prune-protection, force-replace): no properties; they ask the transform
to annotate every object the component and its traits generate (seed 002 l.17, 1668-1670)."""

from __future__ import annotations

from typing import Any

from farm.core.model import DELIVERY_ANNOTATIONS
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import COMMON_KEYS, check_known_keys, check_rendering_keys


def delivery_trait(name: str, annotation: str, value: str) -> TraitType:
    def apply(app: TraitApplication) -> list[dict[str, Any]]:
        check_known_keys(app.properties, COMMON_KEYS)
        intents = app.generated.facts.setdefault(DELIVERY_ANNOTATIONS, {})
        intents[annotation] = value
        return []

    def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
        check_rendering_keys(rendering, (), name)
        return rendering

    return TraitType(name=name, apply=apply, capability="none", validate_rendering=validate_rendering)
