"""Admission and API registration kind components: apiservice, validatingwebhookconfiguration and
mutatingwebhookconfiguration (seed 002, #943). Cluster-scoped and policy-free; the presence rules
beyond the markers are read by hand from the API server's validation (Kubernetes v1.37.1)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds import admission as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.kinds.meta import check_match_expressions

_RULE_LISTS = (
    ("operations", "operation"),
    ("apiGroups", "API group"),
    ("apiVersions", "API version"),
    ("resources", "resource"),
)


def _check_base64(value: str | None, path: str) -> None:
    """[]byte fields are base64 in the API's JSON; Go's decoder refuses anything else."""
    if value is None:
        return
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise FieldError(f"{path}: illegal base64 data (a []byte field is written in base64)") from None


def _check_api_service(kc: KindContext) -> None:
    spec = kc.decoded
    for key in ("version", "group"):
        if not spec.get(key):
            raise FieldError(f"{key}: required (the API server requires an APIService's {key})")
    service = spec.get("service")
    if service is not None:
        for key in ("namespace", "name"):
            if not service.get(key):
                raise FieldError(f"service.{key}: required (the API server requires the Service's {key})")
    _check_base64(spec.get("caBundle"), "caBundle")
    name = kc.obj["metadata"]["name"]
    wanted = f"{spec['version']}.{spec['group']}"
    if name != wanted:
        raise FieldError(
            f'the APIService is named "{name}", and the API requires the name "{wanted}" '
            "(<version>.<group>): name the component so, or set objectName"
        )


def _check_webhook(webhook: dict[str, Any], where: str) -> None:
    client = webhook["clientConfig"]
    if ("url" in client) == ("service" in client):
        raise FieldError(
            f"{where}.clientConfig: exactly one of url and service is required (the API server calls a "
            "webhook at a URL or through a Service)"
        )
    _check_base64(client.get("caBundle"), f"{where}.clientConfig.caBundle")
    if not webhook["admissionReviewVersions"]:
        raise FieldError(f"{where}.admissionReviewVersions: required (at least one version)")
    for r_index, rule in enumerate(webhook.get("rules") or []):
        for key, what in _RULE_LISTS:
            if not rule.get(key):
                raise FieldError(
                    f"{where}.rules[{r_index}].{key}: required (a rule names at least one {what})"
                )
    for key in ("namespaceSelector", "objectSelector"):
        check_match_expressions(webhook.get(key), f"{where}.{key}")


def _check_webhooks(kc: KindContext) -> None:
    for index, webhook in enumerate(kc.decoded.get("webhooks") or []):
        _check_webhook(webhook, f"webhooks[{index}]")


API_SERVICE = kind_component(
    "apiservice",
    "apiregistration.k8s.io/v1",
    "APIService",
    "apiregistrationv1.APIServiceSpec",
    spec=types.API_SERVICE_SPEC,
    cluster_scoped=True,
    check=_check_api_service,
)

VALIDATING_WEBHOOK_CONFIGURATION = kind_component(
    "validatingwebhookconfiguration",
    "admissionregistration.k8s.io/v1",
    "ValidatingWebhookConfiguration",
    "admissionregistrationv1.ValidatingWebhookConfiguration",
    body=types.VALIDATING_WEBHOOK_CONFIGURATION,
    cluster_scoped=True,
    check=_check_webhooks,
)

MUTATING_WEBHOOK_CONFIGURATION = kind_component(
    "mutatingwebhookconfiguration",
    "admissionregistration.k8s.io/v1",
    "MutatingWebhookConfiguration",
    "admissionregistrationv1.MutatingWebhookConfiguration",
    body=types.MUTATING_WEBHOOK_CONFIGURATION,
    cluster_scoped=True,
    check=_check_webhooks,
)
