"""Settings from the environment (prefix HITCURVE_), via pydantic-settings."""

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[3]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HITCURVE_", extra="ignore")

    database_url: str = Field(description="SQLAlchemy URL of the PostgreSQL database")
    redis_url: str = Field(description="Redis URL: Celery broker and result backend")
    # Built dashboard served at / when present (frontend/dist after `npm run build`).
    frontend_dist: Path = REPO_ROOT / "frontend" / "dist"
    # Seconds a health check waits for a dependency before calling it unreachable.
    health_timeout_s: float = 2.0
    # Database connections per process. The pool should cover a process's concurrent requests:
    # a connection opened past it is closed again on return, and each new one costs a SCRAM
    # log-in (milliseconds of CPU on both sides). Overflow absorbs bursts beyond that.
    db_pool_size: int = Field(default=20, ge=1, le=200)
    db_max_overflow: int = Field(default=10, ge=0, le=200)
    environment: str = "development"

    # Browser sessions: cookie lifetime, and whether cookies carry the Secure flag (on behind HTTPS).
    session_ttl_s: int = 14 * 24 * 3600
    cookie_secure: bool = False
    # argon2id cost (RFC 9106 second recommended option by default).
    argon2_time_cost: int = 3
    argon2_memory_kib: int = 65536
    argon2_parallelism: int = 4
    # Seconds an API token / agent key lookup and a fitted sizing curve are reused in one process.
    # A revoked token is refused at once by the process that revoked it and within this time by
    # the others; a new curve is answered within this time. 0 disables the caches.
    hot_cache_ttl_s: float = 2.0
    # Log-in throttling: failures allowed per e-mail and per client address within the window.
    login_window_s: int = 900
    login_max_failures_per_email: int = 5
    login_max_failures_per_ip: int = 30
    # Agent uploads (docs/agent-protocol.md): compressed and decompressed body limits.
    max_body_bytes: int = 8 * 1024 * 1024
    max_decompressed_bytes: int = 32 * 1024 * 1024
    # Seconds to wait for the Celery broker when handing work over; after a failure the backend
    # does not try again for broker_backoff_s (rows stay pending for the worker's re-enqueue job).
    broker_timeout_s: float = 1.0
    # The Celery queue the backend publishes to (the worker's default queue).
    celery_queue: str = "celery"
    broker_backoff_s: float = 10.0


@lru_cache
def get_settings() -> Settings:
    return Settings()  # values come from the environment
