"""Celery beat schedule (scripts/demo.sh starts `celery beat` when this module imports).

A plain dict, read by celery_app.make_celery, so `celery -A hitcurve_worker.celery_app beat`
always has it and importing this module needs no settings."""

from typing import Any

from hitcurve.core import task_names as names

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # pending work older than a minute (lost with a killed worker or a dead broker) goes back
    "requeue-stale-work": {"task": names.REQUEUE_STALE, "schedule": 30.0},
    "agent-silent-alerts": {"task": names.CHECK_SILENT_AGENTS, "schedule": 60.0},
    "downsample-and-retain-history": {"task": names.DOWNSAMPLE_HISTORY, "schedule": 3600.0},
    # weekly e-mail reports: checked hourly, each subscription sent once a week at its weekday/hour
    "weekly-email-reports": {"task": names.DISPATCH_WEEKLY_REPORTS, "schedule": 3600.0},
}
