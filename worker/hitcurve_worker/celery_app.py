"""The Celery application. Broker and result backend: the Redis in HITCURVE_REDIS_URL."""

from typing import Any

from celery import Celery
from celery.signals import worker_process_init

from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine, get_sessionmaker
from hitcurve_worker.heartbeat import Heartbeat
from hitcurve_worker.schedule import BEAT_SCHEDULE

TASK_MODULES = [
    "hitcurve_worker.tasks",
    "hitcurve_worker.snapshot_tasks",
    "hitcurve_worker.trace_tasks",
    "hitcurve_worker.correction_tasks",
    "hitcurve_worker.simulation_tasks",
    "hitcurve_worker.housekeeping",
    "hitcurve_worker.reports.tasks",
]


def make_celery() -> Celery:
    settings = get_settings()
    # Task modules are listed here (imported when a worker starts), one module per job.
    app = Celery("hitcurve", broker=settings.redis_url, backend=settings.redis_url, include=TASK_MODULES)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        # Work is acknowledged after it ran, so a worker killed mid-task leaves it queued.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        result_expires=3600,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": 3600},
        timezone="UTC",
        # Chords (simulation fan-out) poll less and the broker is asked to redeliver on restart.
        result_chord_join_timeout=30,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        beat_schedule=BEAT_SCHEDULE,
    )
    # Liveness for /health: a heartbeat key on the broker (heartbeat.py).
    app.steps["worker"].add(Heartbeat)
    return app


app = make_celery()


@worker_process_init.connect
def _fresh_pool_after_fork(**_: Any) -> None:
    """A forked pool process must not reuse database connections opened by its parent."""
    get_engine.cache_clear()
    get_sessionmaker.cache_clear()
