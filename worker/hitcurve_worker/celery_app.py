"""The Celery application. Broker and result backend: the Redis in HITCURVE_REDIS_URL."""

from typing import Any

from celery import Celery
from celery.signals import worker_process_init
from kombu import Exchange, Queue

from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine, get_sessionmaker
from hitcurve.core.tasks import route_task
from hitcurve_worker.heartbeat import Heartbeat
from hitcurve_worker.schedule import BEAT_SCHEDULE

TASK_MODULES = [
    "hitcurve_worker.tasks",
    "hitcurve_worker.snapshot_tasks",
    "hitcurve_worker.drain_tasks",
    "hitcurve_worker.trace_tasks",
    "hitcurve_worker.correction_tasks",
    "hitcurve_worker.simulation_tasks",
    "hitcurve_worker.fair_tasks",
    "hitcurve_worker.housekeeping",
    "hitcurve_worker.notification_tasks",
    "hitcurve_worker.reports.tasks",
]


def make_celery() -> Celery:
    settings = get_settings()
    # Task modules are listed here (imported when a worker starts), one module per job.
    app = Celery("hitcurve", broker=settings.redis_url, backend=settings.redis_url, include=TASK_MODULES)
    # Two queues (task_names.LANES): a worker started without -Q consumes both (tests, small
    # installs); scripts/supervise.sh runs one worker per queue (`-Q`) so simulations never hold
    # up ingest. Declared exactly as a publisher creates them (exchange and routing key = name).
    queues = [
        Queue(q, Exchange(q), routing_key=q)
        for q in (settings.celery_ingest_queue, settings.celery_batch_queue)
    ]
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_queues=queues,
        task_default_queue=settings.celery_ingest_queue,
        task_routes=(route_task,),
        # Work is acknowledged after it ran, so a worker killed mid-task leaves it queued; every
        # task is idempotent, so the redelivery changes nothing.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        # One reserved task per process (Settings.celery_prefetch): nothing waits behind a long
        # task in a busy process's buffer while another process is idle.
        worker_prefetch_multiplier=settings.celery_prefetch,
        result_expires=3600,
        broker_connection_retry_on_startup=True,
        # Redelivery of an unacknowledged task after this long (Settings.celery_visibility_timeout_s).
        broker_transport_options={"visibility_timeout": settings.celery_visibility_timeout_s},
        timezone="UTC",
        # A lost broker connection does not cancel a running task (its redelivery is idempotent).
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
