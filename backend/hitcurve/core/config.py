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
    environment: str = "development"


@lru_cache
def get_settings() -> Settings:
    return Settings()  # type: ignore[call-arg]  # values come from the environment
