"""cert-manager kind components: issuer, clusterissuer, certificate."""

from __future__ import annotations

from farm.core.errors import PolicyRefusal
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_RESOURCE_MAXIMUM, Policy

from .kindbuild import build, message, refusal

CERT = {"secretName": "tls", "issuerRef": {"name": "ca"}}


def _solver(**pod_spec: object) -> dict:
    return {
        "acme": {
            "server": "https://acme",
            "privateKeySecretRef": {"name": "k"},
            "solvers": [{"http01": {"ingress": {"podTemplate": {"spec": dict(pod_spec)}}}}],
        }
    }


def test_certificate_required_fields() -> None:
    assert message("certificate", {"issuerRef": {"name": "ca"}}) == (
        'component "c": secretName: required (the cert-manager API requires this field)'
    )
    assert message("certificate", {"secretName": "tls", "issuerRef": {"kind": "Issuer"}}) == (
        'component "c": issuerRef.name: required (the cert-manager API requires this field)'
    )
    assert message("certificate", {**CERT, "additionalOutputFormats": [{}]}) == (
        'component "c": additionalOutputFormats[0].type: required (the cert-manager API requires this field)'
    )
    assert message(
        "certificate", {**CERT, "renewal": {"windows": [{"cron": "", "windowDuration": "1h"}]}}
    ) == ('component "c": renewal.windows[0].cron: required (the cert-manager API requires this field)')


def test_certificate_keystore_writes_an_empty_reference_and_keeps_false() -> None:
    spec = build(
        "certificate", {**CERT, "isCA": False, "keystores": {"jks": {"create": False, "password": "x"}}}
    )["spec"]
    assert spec["keystores"] == {"jks": {"create": False, "passwordSecretRef": {"name": ""}, "password": "x"}}
    assert "isCA" not in spec


def test_certificate_durations_in_go_spelling() -> None:
    spec = build("certificate", {**CERT, "duration": "90m", "renewBefore": "1h"})["spec"]
    assert (spec["duration"], spec["renewBefore"]) == ("1h30m0s", "1h0m0s")


def test_keystore_password_under_a_policy_forbidding_explicit_secrets() -> None:
    forbid = Policy(explicit_secrets_allowed=False)
    error = refusal(
        "certificate",
        {**CERT, "keystores": {"jks": {"create": True, "password": ""}}},
        name="web",
        policy=forbid,
    )
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert error.message == (
        'component "web": keystores.jks.password: holds the keystore password in the object, and the '
        "environment policy forbids explicit secrets; name the key of a Secret created out of band in "
        "keystores.jks.passwordSecretRef instead"
    )
    ref = {"create": True, "passwordSecretRef": {"name": "ks", "key": "p"}}
    assert build("certificate", {**CERT, "keystores": {"pkcs12": ref}}, policy=forbid)


def test_empty_issuer_builds_and_clusterissuer_has_no_namespace() -> None:
    assert build("issuer", None)["spec"] == {}
    obj = build("clusterissuer", {"selfSigned": {}, "objectName": "root"}, namespace="shop")
    assert obj["metadata"] == {"name": "root", "labels": {"launcher.gokure.dev/component": "c"}}
    assert obj["spec"] == {"selfSigned": {}}


def test_issuer_required_paths() -> None:
    assert (
        message("issuer", {"ca": {}})
        == 'component "c": ca.secretName: required (the cert-manager API requires this field)'
    )
    webhook = {
        "acme": {
            "server": "s",
            "privateKeySecretRef": {"name": "k"},
            "solvers": [{"dns01": {"cloudflare": {}}}, {"dns01": {"webhook": {"solverName": "x"}}}],
        }
    }
    assert message("issuer", webhook) == (
        'component "c": acme.solvers[1].dns01.webhook.groupName: required (the cert-manager API requires this field)'
    )
    assert message("issuer", {"vault": {"server": "s", "path": "p", "auth": {"kubernetes": {}}}}) == (
        'component "c": vault.auth.kubernetes.role: required (the cert-manager API requires this field)'
    )


def test_issuer_writes_unauthored_references() -> None:
    spec = build(
        "issuer",
        {
            "acme": {
                "server": "s",
                "privateKeySecretRef": {"name": "k"},
                "solvers": [{"dns01": {"rfc2136": {"nameserver": "1.2.3.4"}}}],
            }
        },
    )["spec"]
    assert spec["acme"]["solvers"][0]["dns01"]["rfc2136"] == {
        "nameserver": "1.2.3.4",
        "tsigSecretSecretRef": {"name": ""},
    }


def test_solver_node_affinity_terms_and_selector_keys_required() -> None:
    props = _solver(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}})
    assert message("issuer", props) == (
        'component "c": acme.solvers[0].http01.ingress.podTemplate.spec.affinity.nodeAffinity.'
        "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: required (the cert-manager API "
        "requires this field)"
    )
    term = {"topologyKey": "zone", "labelSelector": {"matchExpressions": [{"key": "app"}]}}
    props = _solver(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    assert message("issuer", props) == (
        'component "c": acme.solvers[0].http01.ingress.podTemplate.spec.affinity.podAntiAffinity.'
        "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: "
        "required (the cert-manager API requires this field)"
    )


def test_solver_resources_held_to_the_maxima() -> None:
    props = _solver(resources={"limits": {"cpu": 4}})
    error = refusal("issuer", props, name="web", policy=Policy(max_cpu="2"))
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_RESOURCE_MAXIMUM
    assert error.message == (
        'component "web": acme.solvers[0].http01.ingress.podTemplate.spec.resources: cpu limit "4" '
        'exceeds enforced maximum "2"'
    )
    assert build("issuer", props, name="web")["spec"]["acme"]["solvers"][0]["http01"]["ingress"][
        "podTemplate"
    ] == {
        "metadata": {},
        "spec": {"resources": {"limits": {"cpu": "4"}}},
    }


def test_solver_pod_component_label_must_be_the_components() -> None:
    props = _solver()
    props["acme"]["solvers"][0]["http01"]["ingress"]["podTemplate"]["metadata"] = {
        "labels": {"launcher.gokure.dev/component": "db"}
    }
    assert message("issuer", props, name="web") == (
        'component "web": Issuer "web": spec.acme.solvers[0].http01.ingress.podTemplate.metadata.labels'
        '["launcher.gokure.dev/component"]: "db" is not the component label of component "web"'
    )
