"""The ``job`` component: a batch/v1 Job from the shared container and pod surface, the twelve
JobSpec properties plus JobSpec.suspend (seed 002, job entry, go-kure/launcher#344). No sidecars;
``spec.selector`` stays unset for the job controller to fill."""

from __future__ import annotations

from typing import Any

from farm.core.components import jobspec as j
from farm.core.components import podspec as p
from farm.core.components import podworkload as w
from farm.core.fields import parse_bool_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

JOB_KEYS = w.NO_SIDECAR_KEYS + j.JOB_SPEC_KEYS + ("restartPolicy", "suspend", "objectName")
REFUSED = {
    **j.BATCH_REFUSED,
    "schedule": "a CronJobSpec field; a job runs once, when it is applied (use a cronjob component)",
    "timeZone": "a CronJobSpec field; a job has no schedule (use a cronjob component)",
    "concurrencyPolicy": "a CronJobSpec field; a job has no schedule (use a cronjob component)",
    "startingDeadlineSeconds": (
        "a CronJobSpec field; a job has no schedule (activeDeadlineSeconds bounds how long the job may run)"
    ),
    "successfulJobsHistoryLimit": (
        "a CronJobSpec field; a job keeps no history (ttlSecondsAfterFinished deletes a finished job)"
    ),
    "failedJobsHistoryLimit": (
        "a CronJobSpec field; a job keeps no history (ttlSecondsAfterFinished deletes a finished job)"
    ),
}
MAX_NAME = 63


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = p.drop_nulls(component.properties)
    name = j.object_name(props, component.name, "Job", MAX_NAME)
    w.refuse(props, REFUSED)
    w.check_known(props, JOB_KEYS)
    job_spec = j.parse_job_spec(props)
    j.check_indexed_hostname(name, job_spec, is_component_name="objectName" not in props)
    suspend, present = parse_bool_field(props, "suspend", "suspend")
    if present:
        job_spec["suspend"] = suspend
    restart = j.parse_restart_policy(props)
    pod = w.build_pod_template(component, props, ctx, job=True, sidecars=False, restart_policy=restart)
    j.check_pod_failure_policy_against_template(job_spec, pod.spec)
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": w.workload_metadata(component.name, name, ctx, props),
        "spec": {**job_spec, "template": pod.template},
    }
    return Generated(objects=[job], workload=job)


HANDLER = ComponentType(name="job", build=build, emits=("batch/v1 Job",))
