"""Field-table audit of the Flux kinds against the published Flux CRD schemas: the fields the
tables lacked decode and are written as authored, with their Go types."""

from __future__ import annotations

from typing import Any

from .kindbuild import build, message

CHART = {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "repo"}}}
SOURCE_REF = {"kind": "GitRepository", "name": "repo"}


def release(**props: Any) -> dict[str, Any]:
    return {"chart": CHART, **props}


def test_helmrelease_health_checks_wait_strategy_and_post_render_strategy_decode() -> None:
    health = [{"apiVersion": "example.com/v1", "kind": "Widget", "current": "status.ready == true"}]
    spec = build(
        "helmrelease",
        release(healthCheckExprs=health, waitStrategy={"name": "poller"}, postRenderStrategy="combined"),
    )["spec"]
    assert spec["healthCheckExprs"] == health
    assert spec["waitStrategy"] == {"name": "poller"}
    assert spec["postRenderStrategy"] == "combined"


def test_helmrelease_server_side_apply_per_action() -> None:
    spec = build(
        "helmrelease",
        release(
            install={"serverSideApply": False},
            upgrade={"serverSideApply": "auto", "chartNameChangeStrategy": "Reinstall"},
            rollback={"serverSideApply": "disabled"},
        ),
    )["spec"]
    # install's is a *bool: an authored false is kept
    assert spec["install"] == {"serverSideApply": False}
    assert spec["upgrade"] == {"serverSideApply": "auto", "chartNameChangeStrategy": "Reinstall"}
    assert spec["rollback"] == {"serverSideApply": "disabled"}


def test_helmrelease_literal_values_reference() -> None:
    reference = {"kind": "ConfigMap", "name": "vals", "valuesKey": "cfg", "targetPath": "config.file"}
    spec = build("helmrelease", release(valuesFrom=[{**reference, "literal": True}]))["spec"]
    assert spec["valuesFrom"] == [{**reference, "literal": True}]


def test_helmrelease_new_fields_keep_their_types() -> None:
    assert message("helmrelease", release(waitStrategy={"name": 1})) == (
        'component "c": waitStrategy.name: must be a string, got int'
    )
    assert message("helmrelease", release(install={"serverSideApply": "auto"})) == (
        'component "c": install.serverSideApply: must be a boolean, got string'
    )
    assert message("helmrelease", release(upgrade={"serverSideApply": True})) == (
        'component "c": upgrade.serverSideApply: must be a string, got bool'
    )


def test_kustomization_build_metadata_ignore_rules_and_substitute_strategy() -> None:
    ignore = [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment"}}]
    spec = build(
        "fluxcd-kustomization",
        {
            "sourceRef": SOURCE_REF,
            "buildMetadata": ["originAnnotations"],
            "ignore": ignore,
            "postBuild": {"substitute": {"cluster": "a"}, "substituteStrategy": "Always"},
        },
    )["spec"]
    assert spec["buildMetadata"] == ["originAnnotations"]
    assert spec["ignore"] == ignore
    assert spec["postBuild"] == {"substitute": {"cluster": "a"}, "substituteStrategy": "Always"}
    assert message("fluxcd-kustomization", {"sourceRef": SOURCE_REF, "ignore": [{"path": ["/a"]}]}) == (
        'component "c": unknown field "ignore[0].path"'
    )


def test_ocirepository_verify_takes_a_trusted_root_and_helmchart_verify_does_not() -> None:
    verify = {"provider": "cosign", "trustedRootSecretRef": {"name": "root"}}
    spec = build("ocirepository", {"url": "oci://ghcr.io/org/app", "verify": verify})["spec"]
    assert spec["verify"] == verify
    chart = {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "repo"}, "verify": verify}
    assert message("helmchart", chart) == 'component "c": unknown field "verify.trustedRootSecretRef"'


def test_imageupdateautomation_signing_key_type() -> None:
    commit = {
        "author": {"email": "bot@example.com"},
        "signingKey": {"secretRef": {"name": "ssh"}, "type": "ssh"},
    }
    spec = build(
        "imageupdateautomation", {"sourceRef": SOURCE_REF, "interval": "5m", "git": {"commit": commit}}
    )["spec"]
    assert spec["git"]["commit"]["signingKey"] == {"secretRef": {"name": "ssh"}, "type": "ssh"}
