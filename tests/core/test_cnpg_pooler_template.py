"""The CloudNativePG Pooler's pod template (seed 002, cnpg-pooler): the PoolerSpec is decoded
strictly, so a template whose pod spec does not have the PodSpec's shape is refused naming the
field, and a null in a ResourceList is the zero quantity."""

from __future__ import annotations

from typing import Any

import pytest

from .kindbuild import build, message

POOLER = {"cluster": {"name": "pg"}, "pgbouncer": {"image": "ghcr.io/cloudnative-pg/pgbouncer:1.23.0"}}


def _pooler_with(pod_spec: Any) -> dict[str, Any]:
    return {**POOLER, "template": {"spec": pod_spec}}


@pytest.mark.parametrize(
    ("pod_spec", "expected"),
    [
        ({"containers": 3.5}, "template.spec.containers: must be a list, got float64"),
        ({"containers": ["pgbouncer"]}, "template.spec.containers[0]: must be an object, got string"),
        ({"hostNetwork": "yes"}, "template.spec.hostNetwork: must be a boolean, got string"),
        ({"volumes": ["data"]}, "template.spec.volumes[0]: must be an object, got string"),
        (
            {"containers": [{"name": "pgbouncer", "securityContext": "-"}]},
            "template.spec.containers[0].securityContext: must be an object, got string",
        ),
        (
            {"containers": [{"name": "pgbouncer", "resources": {"limits": 7}}]},
            "template.spec.containers[0].resources.limits: must be an object, got int",
        ),
        (
            {"containers": [{"name": "pgbouncer", "resources": {"requests": {"memory": []}}}]},
            "template.spec.containers[0].resources.requests.memory: must be a quantity, got []interface {}",
        ),
    ],
)
def test_a_pooler_template_of_the_wrong_shape_is_refused_naming_the_field(
    pod_spec: Any, expected: str
) -> None:
    assert message("cnpg-pooler", _pooler_with(pod_spec)) == f'component "c": {expected}'


def test_a_pooler_template_resource_that_is_no_quantity_is_refused_naming_the_field() -> None:
    pod_spec = {"containers": [{"name": "pgbouncer", "resources": {"limits": {"memory": "128MI"}}}]}
    assert message("cnpg-pooler", _pooler_with(pod_spec)).startswith(
        'component "c": template.spec.containers[0].resources.limits.memory: quantities must match'
    )


def _resources(resources: dict[str, Any]) -> dict[str, Any]:
    return _pooler_with({"containers": [{"name": "pgbouncer", "resources": resources}]})


def test_a_null_pooler_request_beside_a_limit_is_the_zero_quantity_and_builds() -> None:
    pooler = build("cnpg-pooler", _resources({"requests": {"cpu": None}, "limits": {"cpu": "1"}}))
    assert pooler["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1"}


def test_a_pooler_request_over_a_null_limit_is_refused_against_the_zero_quantity() -> None:
    assert message("cnpg-pooler", _resources({"requests": {"cpu": "2"}, "limits": {"cpu": None}})) == (
        'component "c": template.spec.containers[0] "pgbouncer": resources: cpu: request 2 must not exceed limit 0'
    )
