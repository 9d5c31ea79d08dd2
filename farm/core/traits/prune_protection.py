"""The prune-protection trait: ``kustomize.toolkit.fluxcd.io/prune: disabled`` on every object the
component generates, so Flux never deletes them when they leave the build."""

from farm.core.traits._delivery import delivery_trait

PRUNE_ANNOTATION = "kustomize.toolkit.fluxcd.io/prune"

HANDLER = delivery_trait("prune-protection", PRUNE_ANNOTATION, "disabled")
