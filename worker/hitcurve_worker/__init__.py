"""Hitcurve Celery worker: merge, calibrate, simulate, report, alert."""
