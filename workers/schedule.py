"""The beat schedule, built from the settings (no broker needed to read it)."""

from __future__ import annotations

from typing import Any

from farm.settings import FarmSettings

AUDIT_TASK = "farm.audit"
PUBLISH_RETRY_TASK = "farm.publish.retry_due"


def beat_schedule(settings: FarmSettings) -> dict[str, dict[str, Any]]:
    """The reconciler and the qualification finder always; a sampled audit of the latest run when
    ``FARM_AUDIT_SAMPLE`` is set; the retry of failed publishes when ``FARM_PUBLISH_TO`` is set."""
    schedule: dict[str, dict[str, Any]] = {
        "reconcile-stale-jobs": {"task": "farm.reconcile", "schedule": 60.0},
        "qualification-find-due": {"task": "farm.qualification.find_due", "schedule": 300.0},
    }
    if settings.audit_sample > 0:
        schedule["audit-sample"] = {"task": AUDIT_TASK, "schedule": settings.audit_interval}
    if settings.publish_to:
        schedule["publish-retry-due"] = {"task": PUBLISH_RETRY_TASK, "schedule": 60.0}
    return schedule
