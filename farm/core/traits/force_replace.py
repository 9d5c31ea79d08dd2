"""The force-replace trait: ``kustomize.toolkit.fluxcd.io/force: enabled`` on every object the
component generates, so an immutable-field change deletes and recreates the object (a Job)."""

from farm.core.traits._delivery import delivery_trait

FORCE_ANNOTATION = "kustomize.toolkit.fluxcd.io/force"

HANDLER = delivery_trait("force-replace", FORCE_ANNOTATION, "enabled")
