"""The worker's own settings (environment HITCURVE_*, pydantic-settings): housekeeping periods and
retention, attempts before a row is parked, and the crash tests' pause. The database, broker and
queue settings are the backend's (hitcurve.core.config.Settings), the alert thresholds
hitcurve.rules.status.Thresholds, SMTP hitcurve.core.mail.SmtpSettings; docs/configuration.md lists
them all."""

from __future__ import annotations

from pydantic_settings import SettingsConfigDict

from hitcurve.core.config import LenientSettings


class WorkerSettings(LenientSettings):
    model_config = SettingsConfigDict(env_prefix="HITCURVE_", extra="ignore", frozen=True)

    requeue_after_s: float = 60.0  # re-enqueue pending work older than this
    sim_stale_s: float = 600.0  # give up on a simulation silent this long
    # Storage (housekeeping.downsample_and_retain, hourly; docs/storage.md). Each threshold applies
    # to a whole UTC day partition once all of it is that old.
    partition_ahead_days: int = 7  # day partitions created this far ahead
    class_hourly_after_days: float = 7.0  # per-class curves: every window for a week,
    class_daily_after_days: float = 30.0  # then the newest per server and hour, then per day
    history_hourly_after_days: float = 30.0  # snapshots, merged/cluster curves, accuracy: every
    history_daily_after_days: float = 180.0  # window for a month, then hourly, then daily
    retention_days: float = 400.0  # day partitions dropped after this
    payload_retention_days: float = 2.0  # raw snapshot payloads
    trace_retention_days: float = 7.0
    worker_max_attempts: int = 8  # attempts before a row is parked as failed
    # Test hook: seconds a snapshot task holds its transaction open, so the crash-recovery tests
    # can kill the worker or the database mid-task. 0 (unset) in production.
    worker_test_pause_s: float = 0.0


def worker_settings() -> WorkerSettings:
    """Read from the environment now (cheap; tests change it between tasks)."""
    return WorkerSettings()
