"""Settings from the environment (prefix HITCURVE_), via pydantic-settings."""

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, ValidatorFunctionWrapHandler, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[3]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HITCURVE_", extra="ignore")

    database_url: str = Field(description="SQLAlchemy URL of the PostgreSQL database")
    redis_url: str = Field(description="Redis URL: Celery broker and result backend")
    # Built dashboard served at / when present (frontend/dist after `npm run build`).
    frontend_dist: Path = REPO_ROOT / "frontend" / "dist"
    # The agent release served under /api/v1/agent-release (`make -C profiler-agent release`
    # writes it; `make build` too): the install blocks download the agent from here.
    agent_release_dir: Path = REPO_ROOT / "profiler-agent" / "build" / "release"
    # Seconds a health check waits for a dependency before calling it unreachable.
    health_timeout_s: float = 2.0
    # Seconds to wait for a new database connection. A stopped database refuses at once; this
    # covers a database that is up but slow to fork a backend (a busy host): 2 s made requests
    # fail with 503 under load where the connection came a moment later.
    db_connect_timeout_s: int = Field(default=10, ge=1, le=120)
    # Database connections per process. The pool should cover a process's concurrent requests:
    # a connection opened past it is closed again on return, and each new one costs a SCRAM
    # log-in (milliseconds of CPU on both sides). Overflow absorbs bursts beyond that.
    db_pool_size: int = Field(default=20, ge=1, le=200)
    db_max_overflow: int = Field(default=10, ge=0, le=200)
    # Seconds a request waits for a pooled connection before it is answered 503 busy (with
    # Retry-After) instead of piling up behind the others.
    db_pool_timeout_s: float = Field(default=5.0, gt=0, le=60)

    # API processes `python -m hitcurve.serve` starts (uvicorn workers): an upload that keeps one
    # process busy never holds up the others.
    api_workers: int = Field(default=2, ge=1, le=64)
    # uvicorn's access log (one line per request). Off by default: at a fleet's upload rate it is a
    # line per agent per minute, and formatting and writing it cost each upload's request ~2 % of
    # an API process (py-spy under bench/fleet). Errors are logged either way.
    api_access_log: bool = False
    # Addresses (IPs or CIDRs, comma-separated) of reverse proxies whose X-Forwarded-For and
    # X-Forwarded-Proto headers are believed. Empty (the default): no header can choose a client's
    # address; the TCP peer is the client. Set it to the proxy's address when one terminates TLS.
    trusted_proxies: str = ""

    # Browser sessions: cookie lifetime, and whether cookies carry the Secure flag. None (the
    # default): Secure whenever the request came over HTTPS (directly, or through a trusted proxy
    # that says so in X-Forwarded-Proto); true/false force it.
    session_ttl_s: int = 14 * 24 * 3600
    cookie_secure: bool | None = None
    # argon2id cost (RFC 9106 second recommended option by default).
    argon2_time_cost: int = 3
    argon2_memory_kib: int = 65536
    argon2_parallelism: int = 4
    # argon2 computations at once per API process (hitcurve.core.security.password_slot), the
    # log-ins and sign-ups that may wait for one (past them 503 busy at once: each waiter holds one
    # of the API's request threads, which every other route needs too), and the seconds one waits
    # before it is answered 503 busy.
    password_workers: int = Field(default=2, ge=1, le=64)
    password_queue: int = Field(default=6, ge=0, le=64)
    password_wait_s: float = Field(default=10.0, gt=0, le=120)
    # Sign-ups started from one client address per hour (counted in Redis before any password
    # work; hitcurve.core.ratelimit).
    signup_max_per_ip_per_hour: int = Field(default=10, ge=1)
    # Requests per second (and the burst above it) one API token and one agent key may make, per
    # API process; past them 429 with Retry-After (hitcurve.core.ratelimit).
    api_token_rate_per_s: float = Field(default=20.0, gt=0)
    api_token_burst: int = Field(default=60, ge=1)
    agent_key_rate_per_s: float = Field(default=100.0, gt=0)
    agent_key_burst: int = Field(default=400, ge=1)
    # Seconds an API token / agent key lookup and a fitted sizing curve are reused in one process.
    # A revoked token is refused at once by the process that revoked it and within this time by
    # the others; a new curve is answered within this time. 0 disables the caches.
    hot_cache_ttl_s: float = 2.0
    # Seconds an agent key lookup is reused in one process (refreshed ahead in the background, so
    # a key in use is looked up about twice per this time per process, never on the upload's path).
    # A revoked agent key is refused at once by the process that revoked it and within this time by
    # the others. Longer than hot_cache_ttl_s: with the 2 s of the hot cache, 10,000 agents on 50
    # keys made ~70 lookups/s (py-spy: ~12 % of an API process's busy samples). 0: off.
    agent_key_cache_ttl_s: float = Field(default=30.0, ge=0, le=300)
    # Log-in throttling: failures allowed per e-mail, per client address and in all within the
    # window. The global limit caps a distributed guessing run (many addresses, many e-mails).
    login_window_s: int = 900
    login_max_failures_per_email: int = 5
    login_max_failures_per_ip: int = 30
    login_max_failures_global: int = 1000
    # Passwords: zxcvbn score (0-4) a new password must reach; 3 means about 10^8 guesses.
    password_min_score: int = Field(default=3, ge=0, le=4)
    # Links in e-mails (invitations, password reset, the weekly report's links into the dashboard
    # and its unsubscribe link) start with this URL: the dashboard's address as users reach it.
    public_url: str = "http://127.0.0.1:8000"
    # ISO 4217 code of the clusters' price per GiB-month (the dashboard and the e-mails name it).
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    # Key that signs single-purpose links (the report's unsubscribe link). Set it on real installs
    # (e.g. `openssl rand -hex 32`) in the API's and the workers' environment alike; changing it
    # voids the links in e-mails already sent. Unset, a key is derived from database_url, which
    # every process of an install already shares and keeps secret (hitcurve.core.signing).
    secret_key: SecretStr | None = None
    # Seconds an invitation, a password-reset and a sign-up confirmation link stay valid.
    invitation_ttl_s: int = 7 * 24 * 3600
    password_reset_ttl_s: int = 3600
    signup_ttl_s: int = 24 * 3600
    # Workers: a worker counts as alive while its heartbeat (a Redis key it refreshes every
    # worker_heartbeat_s) is younger than worker_stale_s. /health says degraded when none is
    # alive or the oldest upload waiting for a worker is older than max_queue_lag_s.
    worker_heartbeat_s: float = 5.0
    worker_stale_s: float = 20.0
    # API processes beat every accepting_beat_s while their database answers; no beat for
    # accepting_stale_s ends the backend's up period (hitcurve.core.accepting): agents are not
    # blamed for silence while the backend was down.
    accepting_beat_s: float = Field(default=10.0, gt=0)
    accepting_stale_s: float = Field(default=30.0, gt=0)
    max_queue_lag_s: float = 300.0
    # /health says degraded while the oldest pending upload waits longer than this and no worker
    # processed any snapshot within it: longer than a drain's delay plus its lost-drain replacement
    # (core.tasks.DRAIN_FLAG_TTL_S), shorter than anyone waits for a curve.
    drain_stall_s: float = Field(default=15.0, gt=0, le=3600)
    # Decoder processes per API process (hitcurve.ingest.uploads): inflating and validating uploads runs
    # there, never on the API's event loop; 0 decodes in a thread of the API process instead.
    upload_decoders: int = Field(default=1, ge=0, le=16)
    # Agent uploads (docs/agent-protocol.md): compressed and decompressed body limits.
    max_body_bytes: int = 8 * 1024 * 1024
    # Every other route's body limit (log-in, settings, simulation requests: a few KiB), and the
    # request line plus headers of any request (hitcurve.api.bounds, hitcurve.api.http_protocol).
    max_request_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    max_request_head_bytes: int = Field(default=64 * 1024, ge=4096)
    # Seconds a client may take to send a request's head, and its whole body, before the
    # connection is closed (408): slow clients hold no connection or buffer for long. A body of
    # max_body_bytes needs about 1.1 Mbit/s to arrive within the default.
    request_header_timeout_s: float = Field(default=10.0, gt=0, le=300)
    request_body_timeout_s: float = Field(default=60.0, gt=0, le=600)
    max_decompressed_bytes: int = 32 * 1024 * 1024
    # What a snapshot may inflate to: the largest the protocol allows (256 classes with both
    # curves, the breakdown, 500 settings) is ~1.7 MB of JSON; a body past this is refused (413)
    # from its gzip trailer before any decoding, else while it inflates, whatever it holds (fields
    # the protocol does not read count too).
    max_snapshot_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024)
    # Which uploads keep the agent's own document (snapshots.payload_gzip, ~20 KB gzip a window,
    # dropped after HITCURVE_PAYLOAD_RETENTION_DAYS): `flagged` ones (the agent's self-check or
    # loss flagged the window: what a person diagnoses), `all`, or `none`. Nothing the product
    # answers reads it; at `all` it is a fifth of the database's write volume per upload.
    store_payloads: Literal["all", "flagged", "none"] = "flagged"
    # Bytes one agent key's uploads may inflate to per minute, per API process (accepted or
    # refused alike; each reserves what its gzip trailer declares before a decoder reads it, so
    # uploads sent at once cannot all pass); past it 429 with Retry-After (core.ratelimit). A fleet
    # of 1,000 agents on one key inflates ~150 MB a minute over all the API processes; one key
    # sending budget-sized junk keeps a decoder busy ~15 s of each minute at most.
    agent_key_decoded_bytes_per_minute: int = Field(default=256 * 1024 * 1024, ge=1024 * 1024)
    # Seconds to wait for the Celery broker when handing work over; after a failure the backend
    # does not try again for broker_backoff_s (rows stay pending for the worker's re-enqueue job).
    broker_timeout_s: float = 1.0
    broker_backoff_s: float = 10.0
    # An upload publishes a drain of the pending snapshots (hitcurve.drain_snapshots) only when
    # none is queued, to run this many seconds later: the uploads of those seconds become one
    # message and one batch (bench/results/2026-11-27-fleet-fourth-pass.md), for at most this
    # much more latency.
    drain_delay_s: float = Field(default=1.0, ge=0.0, le=60.0)
    # Celery queues (Redis lists), one per lane of hitcurve.core.task_names.LANES: uploads and
    # their merges on the ingest queue, simulations/corrections/reports/maintenance on the batch
    # queue, each consumed by its own workers (scripts/supervise.sh), so a burst of policy runs
    # never delays curves.
    celery_ingest_queue: str = "hitcurve.ingest"
    celery_batch_queue: str = "hitcurve.batch"
    # Seconds the Redis broker waits for a fetched task's acknowledgement before it hands the
    # task to another worker. Tasks are acknowledged late (after they ran), so this must exceed
    # the longest task plus its prefetch wait; every task is idempotent, so a redelivery (after
    # a worker died, or a task ran longer than this) changes nothing but costs the work again.
    celery_visibility_timeout_s: int = Field(default=3600, ge=60)
    # Tasks a worker process reserves beyond the one it runs (Celery's prefetch multiplier).
    # 1: a slow simulation never holds ingest tasks hostage, and a killed worker strands at
    # most one message per process (redelivered after the visibility timeout or re-enqueued).
    celery_prefetch: int = Field(default=1, ge=1, le=16)
    # Simulation runs one organization may have queued or running at once; past it a new request is
    # refused (429 too_many_simulations). The batch lane serves organizations round-robin
    # (hitcurve.core.fairqueue), so this bounds one organization's backlog, not others' wait.
    simulations_per_org: int = Field(default=4, ge=1, le=1000)
    # Upload-to-curve lag in /health: percentiles over the snapshots processed in this window.
    lag_window_s: float = 300.0
    # Alert notification channels (hitcurve/notify/outbound.py): targets on loopback, private,
    # link-local, multicast or otherwise non-public addresses are refused unless this is true (a
    # self-hosted install whose receivers live on its own network).
    allow_private_webhooks: bool = False
    # The install's administrators: the logged-in users with these e-mails (comma-separated) may
    # change the install's settings in the dashboard without a restart (hitcurve.crud.install:
    # private addresses for notification channels). Empty: only the host's command may.
    admin_emails: str = ""
    # One delivery attempt waits at most webhook_timeout_s; a failed one (5xx, 408, 429, network)
    # is tried again after webhook_backoff_s x 2^(attempt-1), capped at an hour, until
    # webhook_max_attempts attempts have been made (default: 30 s ... about 1 h apart, 8 attempts).
    webhook_timeout_s: float = Field(default=10.0, gt=0, le=60)
    webhook_backoff_s: float = Field(default=30.0, ge=0, le=3600)
    webhook_max_attempts: int = Field(default=8, ge=1, le=50)


@lru_cache
def get_settings() -> Settings:
    return Settings()  # values come from the environment


class LenientSettings(BaseSettings):
    """Settings whose unparsable values keep their defaults (a typo in one tuning variable must
    not stop the alert rules or the housekeeping beat); base of status.Thresholds and the
    worker's WorkerSettings."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    @field_validator("*", mode="wrap")
    @classmethod
    def _default_when_unparsable(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: Any) -> Any:
        try:
            return handler(value)
        except ValidationError:
            return cls.model_fields[info.field_name].default
