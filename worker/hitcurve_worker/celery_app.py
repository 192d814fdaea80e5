"""The Celery application. Broker and result backend: the Redis in HITCURVE_REDIS_URL."""

from celery import Celery

from hitcurve.core.config import get_settings


TASK_MODULES = ["hitcurve_worker.tasks"]


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
    )
    return app


app = make_celery()
