"""cert-manager kind components: issuer, clusterissuer and certificate (seed 002, their entry), on
the kind engine with the policy-held checks: an ACME HTTP01 solver pod's resources against the cpu
and memory maxima, its pod labels, and a certificate's keystore passwords against explicit secrets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds import certmanager as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.model import COMPONENT_LABEL
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_RESOURCE_MAXIMUM, refuse
from farm.core.quantity import parse_quantity

CERT_MANAGER_V1 = "cert-manager.io/v1"
_SOLVER_WAYS = ("ingress", "gatewayHTTPRoute")
_NODE_TERMS = "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
_POD_AFFINITIES = ("podAffinity", "podAntiAffinity")


def _solver_pod_templates(
    decoded: dict[str, Any], authored: dict[str, Any]
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Each authored HTTP01 solver pod template: its path, decoded form and authored form."""
    decoded_solvers = (decoded.get("acme") or {}).get("solvers") or []
    authored_solvers = (authored.get("acme") or {}).get("solvers") or []
    for index, (solver, written) in enumerate(zip(decoded_solvers, authored_solvers, strict=False)):
        for way in _SOLVER_WAYS:
            template = ((solver.get("http01") or {}).get(way) or {}).get("podTemplate")
            if template is None:
                continue
            raw = ((written.get("http01") or {}).get(way) or {}).get("podTemplate") or {}
            yield f"acme.solvers[{index}].http01.{way}.podTemplate", template, raw


def _selector_requirements(affinity: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for name in _POD_AFFINITIES:
        block = affinity.get(name) or {}
        terms = [
            (f"{path}.{name}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", t)
            for i, t in enumerate(block.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        ]
        terms += [
            (
                f"{path}.{name}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm",
                (t or {}).get("podAffinityTerm") or {},
            )
            for i, t in enumerate(block.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
        ]
        for term_path, term in terms:
            for selector_key in ("labelSelector", "namespaceSelector"):
                selector = (term or {}).get(selector_key) or {}
                for e_index, expression in enumerate(selector.get("matchExpressions") or []):
                    yield f"{term_path}.{selector_key}.matchExpressions[{e_index}]", expression or {}


def _check_solver_required(path: str, template: dict[str, Any], raw: dict[str, Any]) -> None:
    affinity = (template.get("spec") or {}).get("affinity") or {}
    required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None and required.get("nodeSelectorTerms") is None:
        raise FieldError(
            f"{path}.spec.affinity.{_NODE_TERMS}: required (the cert-manager API requires this field)"
        )
    raw_affinity = (raw.get("spec") or {}).get("affinity") or {}
    for expression_path, expression in _selector_requirements(raw_affinity, f"{path}.spec.affinity"):
        for key in ("key", "operator"):
            if expression.get(key) is None:
                raise FieldError(
                    f"{expression_path}.{key}: required (the cert-manager API requires this field)"
                )


def _check_solver_resources(path: str, template: dict[str, Any], kc: KindContext) -> None:
    policy = kc.build.policy
    resources = (template.get("spec") or {}).get("resources") or {}
    for way, word in (("limits", "limit"), ("requests", "request")):
        for resource, maximum in (("cpu", policy.max_cpu), ("memory", policy.max_memory)):
            value = (resources.get(way) or {}).get(resource)
            if value is not None and maximum and parse_quantity(value) > parse_quantity(maximum):
                raise refuse(
                    f'{path}.spec.resources: {resource} {word} "{value}" exceeds enforced maximum "{maximum}"',
                    REFUSAL_RESOURCE_MAXIMUM,
                )


def _check_solver_labels(path: str, template: dict[str, Any], kc: KindContext) -> None:
    labels = (template.get("metadata") or {}).get("labels") or {}
    value = labels.get(COMPONENT_LABEL)
    if value is not None and value != kc.component.name:
        raise FieldError(
            f'{kc.obj["kind"]} "{kc.obj["metadata"]["name"]}": spec.{path}.metadata.labels["{COMPONENT_LABEL}"]: '
            f'"{value}" is not the component label of component "{kc.component.name}"'
        )


def _check_issuer(kc: KindContext) -> None:
    for path, template, raw in _solver_pod_templates(kc.decoded, kc.authored):
        _check_solver_required(path, template, raw)
        _check_solver_labels(path, template, kc)
        _check_solver_resources(path, template, kc)


def _check_certificate(kc: KindContext) -> None:
    if kc.build.policy.explicit_secrets_allowed:
        return
    keystores = kc.decoded.get("keystores") or {}
    for store in ("jks", "pkcs12"):
        if (keystores.get(store) or {}).get("password") is not None:
            raise refuse(
                f"keystores.{store}.password: holds the keystore password in the object, and the environment "
                "policy forbids explicit secrets; name the key of a Secret created out of band in "
                f"keystores.{store}.passwordSecretRef instead",
                REFUSAL_EXPLICIT_SECRET,
            )


ISSUER = kind_component(
    "issuer",
    CERT_MANAGER_V1,
    "Issuer",
    "certmanagerv1.IssuerSpec",
    spec=types.ISSUER_SPEC,
    api=types.CERT_MANAGER,
    check=_check_issuer,
)

CLUSTER_ISSUER = kind_component(
    "clusterissuer",
    CERT_MANAGER_V1,
    "ClusterIssuer",
    "certmanagerv1.IssuerSpec",
    spec=types.ISSUER_SPEC,
    api=types.CERT_MANAGER,
    cluster_scoped=True,
    check=_check_issuer,
)

CERTIFICATE = kind_component(
    "certificate",
    CERT_MANAGER_V1,
    "Certificate",
    "certmanagerv1.CertificateSpec",
    spec=types.CERTIFICATE_SPEC,
    api=types.CERT_MANAGER,
    check=_check_certificate,
)
