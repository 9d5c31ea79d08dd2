"""statefulset, daemonset, job and cronjob: the shared JobSpec parser, the cron fields, the
DaemonSet update-strategy pair rule and the StatefulSet claim templates."""

from __future__ import annotations

from typing import Any

import pytest

from farm.core.components import cronjob, daemonset, job, statefulset
from farm.core.components.jobspec import check_pod_failure_policy_against_template, parse_job_spec
from farm.core.documents import load_cluster_profile
from farm.core.errors import FieldError, PolicyRefusal
from farm.core.model import BuildContext, ComponentSpec
from farm.core.policy import REFUSAL_STORAGE_MAXIMUM, Policy

PROFILE = load_cluster_profile(
    "apiVersion: launcher.gokure.dev/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: c\n"
    "spec:\n  capabilities: {}\n"
)
IMAGE = "ghcr.io/example/app:v1.0.0"


def _build(handler: Any, props: dict[str, Any], name: str = "app", policy: Policy | None = None) -> dict:
    ctx = BuildContext(app_name="a", namespace="ns", profile=PROFILE, policy=policy or Policy())
    component = ComponentSpec(name=name, type=handler.name, properties={"image": IMAGE, **props})
    return handler.build(component, ctx).objects[0]


def _refused(message: str, props: dict[str, Any]) -> None:
    with pytest.raises(FieldError) as caught:
        parse_job_spec(props)
    assert caught.value.message == message


# --- JobSpec -------------------------------------------------------------------------------------


def test_job_spec_is_presence_gated() -> None:
    assert parse_job_spec({}) == {}
    assert parse_job_spec({"backoffLimit": None, "completionMode": None}) == {}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"activeDeadlineSeconds": 0}, "activeDeadlineSeconds: must be > 0, got 0"),
        ({"backoffLimit": -1}, "backoffLimit: must be >= 0, got -1"),
        ({"completionMode": "Indexed"}, "completions: required when completionMode is Indexed"),
        ({"backoffLimitPerIndex": 1}, "backoffLimitPerIndex: requires completionMode Indexed"),
        (
            {"completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": 1, "maxFailedIndexes": 4},
            "maxFailedIndexes: must be less than or equal to completions (3), got 4",
        ),
        (
            {"podReplacementPolicy": ""},
            'podReplacementPolicy: must be one of Failed, TerminatingOrFailed, got ""',
        ),
    ],
)
def test_job_spec_rules(props: dict[str, Any], message: str) -> None:
    _refused(message, props)


def test_success_policy_intervals() -> None:
    base = {"completionMode": "Indexed", "completions": 5}
    spec = parse_job_spec({**base, "successPolicy": {"rules": [{"succeededIndexes": "0,2-4"}]}})
    assert spec["successPolicy"] == {"rules": [{"succeededIndexes": "0,2-4"}]}
    _refused(
        "successPolicy.rules[0].succeededIndexes: index 5 must be less than completions (5)",
        {**base, "successPolicy": {"rules": [{"succeededIndexes": "3-5"}]}},
    )
    _refused(
        "successPolicy.rules[0].succeededIndexes: must not be empty",
        {**base, "successPolicy": {"rules": [{"succeededIndexes": ""}]}},
    )
    _refused(
        "successPolicy.rules[0].succeededCount: must be less than or equal to the number of indexes in "
        "succeededIndexes (2), got 3",
        {**base, "successPolicy": {"rules": [{"succeededIndexes": "0,1", "succeededCount": 3}]}},
    )


def test_pod_failure_policy_condition_status_defaults_to_true() -> None:
    rule = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
    spec = parse_job_spec({"podFailurePolicy": {"rules": [rule]}})
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}
    ]


@pytest.mark.parametrize(
    "rule",
    [
        {"action": "FailJob", "onPodConditions": []},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}, "onPodConditions": []},
    ],
)
def test_pod_failure_rule_needs_exactly_one_matcher(rule: dict[str, Any]) -> None:
    _refused(
        "podFailurePolicy.rules[0]: exactly one of onExitCodes and onPodConditions is required",
        {"podFailurePolicy": {"rules": [rule]}},
    )


def test_pod_failure_exit_codes_increase_without_duplicates() -> None:
    rule = {"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [2, 2]}}
    _refused(
        "podFailurePolicy.rules[0].onExitCodes.values[1]: must be ordered in increasing order without "
        "duplicates, got 2",
        {"podFailurePolicy": {"rules": [rule]}},
    )


def test_pod_failure_container_name_must_name_a_built_container() -> None:
    rule = {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1], "containerName": "other"}}
    spec = parse_job_spec({"podFailurePolicy": {"rules": [rule]}})
    pod = {"restartPolicy": "Never", "containers": [{"name": "app"}]}
    with pytest.raises(FieldError, match='containerName: "other" names no container'):
        check_pod_failure_policy_against_template(spec, pod)


# --- job and cronjob -----------------------------------------------------------------------------


def test_job_suspend_writes_job_spec_and_cronjob_suspend_writes_cronjob_spec() -> None:
    job_obj = _build(job.HANDLER, {"suspend": True})
    assert job_obj["spec"]["suspend"] is True
    cron_obj = _build(cronjob.HANDLER, {"schedule": "0 2 * * *", "suspend": True})
    assert cron_obj["spec"]["suspend"] is True
    assert "suspend" not in cron_obj["spec"]["jobTemplate"]["spec"]


def test_job_leaves_selector_unset_and_refuses_always() -> None:
    assert "selector" not in _build(job.HANDLER, {})["spec"]
    with pytest.raises(FieldError, match="^restartPolicy: Always is not allowed"):
        _build(job.HANDLER, {"restartPolicy": "Always"})
    with pytest.raises(FieldError, match='^restartPolicy: invalid value ""'):
        _build(job.HANDLER, {"restartPolicy": ""})


def test_cronjob_writes_defaults_and_no_concurrency_policy() -> None:
    spec = _build(cronjob.HANDLER, {"schedule": "0 2 * * *"})["spec"]
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    assert "concurrencyPolicy" not in spec
    assert spec["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_cronjob_name_boundary() -> None:
    _build(cronjob.HANDLER, {"schedule": "0 2 * * *"}, name="x" * 52)
    with pytest.raises(FieldError, match="which must be at most 52 characters: it has 53$"):
        _build(cronjob.HANDLER, {"schedule": "0 2 * * *"}, name="x" * 53)


@pytest.mark.parametrize("schedule", ["0 0 2 * * *", "@reboot", "@every 1x", "@every", "* * * *"])
def test_cronjob_refuses_bad_schedules(schedule: str) -> None:
    with pytest.raises(FieldError, match="^schedule: "):
        _build(cronjob.HANDLER, {"schedule": schedule})


@pytest.mark.parametrize("zone", ["", "Local", "LOCAL", "Mars/Olympus"])
def test_cronjob_refuses_bad_time_zones(zone: str) -> None:
    with pytest.raises(FieldError, match="^timeZone: "):
        _build(cronjob.HANDLER, {"schedule": "@hourly", "timeZone": zone})


# --- daemonset -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rolling", "accepted"),
    [
        ({"maxUnavailable": 0, "maxSurge": 1}, True),
        ({"maxUnavailable": "50%"}, True),
        ({"maxSurge": 2}, False),
        ({"maxUnavailable": 0}, False),
        ({"maxUnavailable": "+50%"}, False),
        ({"maxUnavailable": "101%"}, False),
    ],
)
def test_daemonset_rolling_update_pair(rolling: dict[str, Any], accepted: bool) -> None:
    props = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}
    if accepted:
        assert _build(daemonset.HANDLER, props)["spec"]["updateStrategy"]["rollingUpdate"] == rolling
    else:
        with pytest.raises(FieldError, match="^updateStrategy.rollingUpdate"):
            _build(daemonset.HANDLER, props)


def test_daemonset_update_strategy_type_required_and_on_delete_takes_no_rolling_update() -> None:
    with pytest.raises(FieldError, match="^updateStrategy.type: required"):
        _build(daemonset.HANDLER, {"updateStrategy": {}})
    on_delete = {"type": "OnDelete", "rollingUpdate": {"maxUnavailable": 1}}
    with pytest.raises(
        FieldError, match="^updateStrategy.rollingUpdate: only accepted under type RollingUpdate"
    ):
        _build(daemonset.HANDLER, {"updateStrategy": on_delete})


# --- statefulset ---------------------------------------------------------------------------------


def test_statefulset_service_name_has_no_default() -> None:
    assert _build(statefulset.HANDLER, {})["spec"]["serviceName"] == ""


def test_statefulset_refuses_the_affinity_shorthand() -> None:
    with pytest.raises(FieldError, match='unknown property "enablePodAntiAffinity"'):
        _build(statefulset.HANDLER, {"enablePodAntiAffinity": True})


def test_statefulset_claim_template_needs_exactly_one_path_and_respects_storage_maximum() -> None:
    claim = {"name": "data", "size": "1Gi"}
    with pytest.raises(FieldError, match="exactly one of mountPath and devicePath"):
        _build(statefulset.HANDLER, {"volumeClaimTemplates": [claim]})
    claim["mountPath"] = "/data"
    with pytest.raises(PolicyRefusal) as caught:
        _build(statefulset.HANDLER, {"volumeClaimTemplates": [claim]}, policy=Policy(max_storage="512Mi"))
    assert caught.value.refusal_class == REFUSAL_STORAGE_MAXIMUM
