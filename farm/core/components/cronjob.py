"""The ``cronjob`` component: a batch/v1 CronJob whose job template is built from the shared
container and pod surface and the twelve JobSpec properties (seed 002, cronjob entry). The
CronJobSpec fields concurrencyPolicy, suspend, startingDeadlineSeconds and timeZone are written
only when authored; restartPolicy and the two history limits always (OnFailure, 3, 1)."""

from __future__ import annotations

from importlib import resources
from typing import Any

from farm.core.components import jobspec as j
from farm.core.components import podspec as p
from farm.core.components import podworkload as w
from farm.core.durations import DurationError, parse_duration
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_bool_field, parse_int32_field, parse_int64_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

CRONJOB_SPEC_KEYS = (
    "schedule",
    "timeZone",
    "concurrencyPolicy",
    "suspend",
    "startingDeadlineSeconds",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
)
CRONJOB_KEYS = w.NO_SIDECAR_KEYS + j.JOB_SPEC_KEYS + CRONJOB_SPEC_KEYS + ("restartPolicy", "objectName")
MAX_NAME = 52  # the controller names each Job after the CronJob plus an 11-character suffix
DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
HISTORY_DEFAULTS = {"successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}


def parse_schedule(props: dict[str, Any]) -> str:
    value = props.get("schedule")
    if value is None or value == "":
        raise FieldError("schedule is required")
    if not isinstance(value, str):
        raise FieldError(f"schedule: must be a string, got {go_type_name(value)}")
    text = value.strip()
    if text.startswith("@every "):
        _check_every(value, text[len("@every ") :].strip())
    elif text.startswith("@"):
        if text not in DESCRIPTORS:
            raise FieldError(
                f'schedule: "{value}" is not a supported descriptor (one of {", ".join(DESCRIPTORS)}, '
                "or @every <duration>)"
            )
    elif len(text.split()) != 5:
        raise FieldError(
            f'schedule: "{value}" must be a standard 5-field cron expression (minute hour day-of-month '
            f"month day-of-week), got {len(text.split())} fields"
        )
    return value


def _check_every(value: str, duration: str) -> None:
    try:
        nanoseconds = parse_duration(duration)
    except DurationError as exc:
        raise FieldError(f'schedule: "{value}": {exc}') from None
    if nanoseconds <= 0:
        raise FieldError(f'schedule: "{value}": the @every interval must be positive')


def parse_time_zone(props: dict[str, Any]) -> str | None:
    value = props.get("timeZone")
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"timeZone: must be a string, got {go_type_name(value)}")
    if value == "":
        raise FieldError('timeZone: "" is not a time zone (omit it for the controller\'s zone)')
    if value.lower() == "local":
        raise FieldError(f'timeZone: "{value}" is not allowed: it depends on the server; name an IANA zone')
    if not _is_known_zone(value):
        raise FieldError(f'timeZone: "{value}" is not a known IANA time zone')
    return value


def _is_known_zone(name: str) -> bool:
    """Whether the IANA database shipped in the ``tzdata`` package names this zone. The packaged
    database, not the host's, so every worker gives the same answer."""
    parts = name.split("/")
    if len(name) > 255 or any(part in ("", ".", "..") for part in parts):
        return False  # no zone name is this long: and a file name past the limit is an OSError
    entry = resources.files("tzdata").joinpath("zoneinfo", *parts)
    try:
        return entry.is_file()
    except (OSError, ValueError):  # a name holding NUL, or a part too long for the file system
        return False


def _cron_spec_fields(props: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    policy = props.get("concurrencyPolicy")
    if policy is not None:
        if not isinstance(policy, str):
            raise FieldError(f"concurrencyPolicy: must be a string, got {go_type_name(policy)}")
        if policy not in CONCURRENCY_POLICIES:
            raise FieldError(
                f'concurrencyPolicy: invalid value "{policy}", must be one of Allow, Forbid, Replace'
            )
        out["concurrencyPolicy"] = policy
    suspend, present = parse_bool_field(props, "suspend", "suspend")
    if present:
        out["suspend"] = suspend
    deadline, present = parse_int64_field(props, "startingDeadlineSeconds", "startingDeadlineSeconds")
    if present:
        if deadline < 0:
            raise FieldError(f"startingDeadlineSeconds: must be >= 0, got {deadline}")
        out["startingDeadlineSeconds"] = deadline
    zone = parse_time_zone(props)
    if zone is not None:
        out["timeZone"] = zone
    for key, default in HISTORY_DEFAULTS.items():
        value, present = parse_int32_field(props, key, key)
        if present and value < 0:
            raise FieldError(f"{key}: must be >= 0, got {value}")
        out[key] = value if present else default
    return out


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = p.drop_nulls(component.properties)
    name = j.object_name(props, component.name, "CronJob", MAX_NAME)
    w.refuse(props, j.BATCH_REFUSED)
    w.check_known(props, CRONJOB_KEYS)
    schedule = parse_schedule(props)
    cron_fields = _cron_spec_fields(props)
    job_spec = j.parse_job_spec(props)
    restart = j.parse_restart_policy(props)
    pod = w.build_pod_template(component, props, ctx, job=True, sidecars=False, restart_policy=restart)
    j.check_pod_failure_policy_against_template(job_spec, pod.spec)
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": w.workload_metadata(component.name, name, ctx, props),
        "spec": {
            "schedule": schedule,
            **cron_fields,
            "jobTemplate": {
                "metadata": {"labels": {"app": component.name}},
                "spec": {**job_spec, "template": pod.template},
            },
        },
    }
    return Generated(objects=[cronjob], workload=cronjob)


HANDLER = ComponentType(name="cronjob", build=build, emits=("batch/v1 CronJob",))
