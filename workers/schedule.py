"""The beat schedule, built from the settings (no broker needed to read it).

Each entry's schedule is a ``FARM_*`` setting: crontab syntax for the reconciler and the
qualification finder (parsed by Celery's own ``crontab``), seconds for the sampled audit.
``farm beat --help`` lists every entry (``tests/qualification/test_schedule.py`` keeps the two
equal).
"""

from __future__ import annotations

from typing import Any

from celery.schedules import ParseException, crontab

from farm.settings import ENV_PREFIX, FarmSettings, SettingsError

AUDIT_TASK = "farm.audit"
CRONTAB_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")


def parse_crontab(setting: str, value: str) -> crontab:
    """The five crontab fields of ``value`` (minute hour day-of-month month day-of-week) as
    Celery's schedule; a :class:`SettingsError` naming ``setting`` when they do not parse."""
    variable = ENV_PREFIX + setting.upper()
    fields = value.split()
    if len(fields) != len(CRONTAB_FIELDS):
        raise SettingsError(
            f"{variable}: expected 5 crontab fields (minute hour day-of-month month day-of-week), "
            f"got {value!r}"
        )
    try:
        return crontab(**dict(zip(CRONTAB_FIELDS, fields, strict=True)))
    except (ValueError, ParseException) as error:
        raise SettingsError(f"{variable}: {value!r} is not a crontab schedule: {error}") from None


PUBLISH_RETRY_TASK = "farm.publish.retry_due"


def beat_schedule(settings: FarmSettings) -> dict[str, dict[str, Any]]:
    """The reconciler and the qualification finder always; a sampled audit of the latest run when
    ``FARM_AUDIT_SAMPLE`` is set; the retry of failed publishes when ``FARM_PUBLISH_TO`` is set."""
    schedule: dict[str, dict[str, Any]] = {
        "reconcile-stale-jobs": {
            "task": "farm.reconcile",
            "schedule": parse_crontab("reconcile_schedule", settings.reconcile_schedule),
        },
        "qualification-find-due": {
            "task": "farm.qualification.find_due",
            "schedule": parse_crontab("qualification_schedule", settings.qualification_schedule),
        },
    }
    if settings.audit_sample > 0:
        schedule["audit-sample"] = {"task": AUDIT_TASK, "schedule": settings.audit_interval}
    if settings.publish_to:
        schedule["publish-retry-due"] = {"task": PUBLISH_RETRY_TASK, "schedule": 60.0}
    return schedule
