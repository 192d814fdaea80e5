"""Request and response bodies of the browser and autoscaler API."""

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, EmailStr, Field, StringConstraints

from hitcurve.core.security import password_problem
from hitcurve.rules.status import Status
from hitcurve.schemas.common import ByteSize, HitRatio, Name, Text
from hitcurve.schemas.sizing import MEASURED_HIT_RATIO_DOC, SizingAnswer

Role = Literal["owner", "member", "viewer"]


def _strong(value: str) -> str:
    problem = password_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# A new password: 10 to 256 characters and not guessable (core.security.password_problem).
Password = Annotated[str, StringConstraints(min_length=10, max_length=256), AfterValidator(_strong)]
# The token of a mailed link: any length up to the limit reaches the lookup, so a link cut short
# by a mail program answers "this link is invalid, used or expired" instead of a schema error
# ("token: String should have at least 16 characters" on the confirm page).
LinkToken = Annotated[str, StringConstraints(min_length=1, max_length=128)]


class In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


# --- auth and tenancy -------------------------------------------------------------------------
class SignupIn(In):
    email: EmailStr
    password: Password
    display_name: Text = ""
    org_name: Name

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "email": "ada@example.com",
                    "password": "correct horse battery",
                    "display_name": "Ada",
                    "org_name": "Example Inc",
                }
            ]
        }
    )


class LoginIn(In):
    email: Annotated[str, StringConstraints(min_length=3, max_length=320)]
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)]


class PasswordChangeIn(In):
    current_password: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    new_password: Password


class SwitchOrgIn(In):
    org_id: uuid.UUID


class OrgIn(In):
    name: Name


class MembershipOut(Out):
    org_id: uuid.UUID
    org_name: str
    role: Role


class UserOut(Out):
    id: uuid.UUID
    email: str
    display_name: str


class MeOut(BaseModel):
    user: UserOut
    org_id: uuid.UUID
    org_name: str
    role: Role
    memberships: list[MembershipOut]
    csrf_token: str = Field(description="also in the readable cookie hitcurve_csrf; send it as X-CSRF-Token")


class InvitationIn(In):
    email: EmailStr
    role: Role = "member"


class InvitationOut(Out):
    id: uuid.UUID
    email: str
    role: Role
    created_at: datetime
    expires_at: datetime


class InvitationView(BaseModel):
    """What the holder of an invitation link sees before accepting it."""

    org_name: str
    role: Role
    email: str = Field(description="the invited e-mail: accept while logged in with this address")
    invited_by: str | None
    expires_at: datetime


class InvitationAcceptIn(In):
    token: LinkToken


class SignupConfirmIn(In):
    token: LinkToken


class PasswordResetIn(In):
    email: Annotated[str, StringConstraints(min_length=3, max_length=320)]


class PasswordResetConfirmIn(In):
    token: LinkToken
    new_password: Password


class Accepted(BaseModel):
    detail: str


class MemberRoleIn(In):
    role: Role


class MemberOut(BaseModel):
    user_id: uuid.UUID
    email: str
    display_name: str
    role: Role
    created_at: datetime


# --- keys and tokens --------------------------------------------------------------------------
class AgentKeyIn(In):
    name: Name


class ApiTokenIn(In):
    name: Name
    scope: Literal["read", "read_write"] = "read"


class KeyOut(Out):
    id: uuid.UUID
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class ApiTokenOut(KeyOut):
    scope: Literal["read", "read_write"]


class AgentKeyCreated(KeyOut):
    key: str = Field(description="the secret, shown only in this answer")


class ApiTokenCreated(ApiTokenOut):
    token: str = Field(description="the secret, shown only in this answer")


# --- inventory --------------------------------------------------------------------------------
GiB = 1024**3


MissCostSource = Literal["entered", "measured"]
# What a million misses cost, and a CPU-hour (the cluster's currency, like its memory price).
MissCost = Annotated[
    float,
    Field(
        ge=0,
        le=1e9,
        allow_inf_nan=False,
        description="what a million misses cost (the cluster's currency): entered by the operator",
    ),
]
CpuPrice = Annotated[
    float,
    Field(
        ge=0,
        le=1e6,
        allow_inf_nan=False,
        description="the price of one CPU-hour: a measured miss cost prices the agents' miss-to-set "
        "time at it",
    ),
]
# Limits of a cluster's prefix_miss_costs (hitcurve.cost.prefixes prices them).
MAX_PRICED_PREFIXES = 16
MAX_PREFIX_LENGTH = 128
_PREFIX_COSTS_DOC = (
    "prefixes whose misses cost apart from the rest: {prefix: what a million of its misses cost}, "
    "the prefixes as the agent names them (its --prefix-delimiter/--prefix-depth rule, the breakdown's "
    f"names); at most {MAX_PRICED_PREFIXES}; null or {{}} prices every miss at the cluster's miss cost"
)


def _prefix_costs(v: dict[str, float] | None) -> dict[str, float] | None:
    if v is None:
        return None
    if len(v) > MAX_PRICED_PREFIXES:
        raise ValueError(f"at most {MAX_PRICED_PREFIXES} priced prefixes, not {len(v)}")
    for name in v:
        if not name or len(name) > MAX_PREFIX_LENGTH or not name.isprintable():
            raise ValueError(
                f"a prefix is 1 to {MAX_PREFIX_LENGTH} printable characters, as the agent names it: "
                f"{name[:40]!r}"
            )
        if name == "(other)":
            raise ValueError("'(other)' is every unnamed prefix: price those with miss_cost_per_million")
    return v


PrefixMissCosts = Annotated[
    dict[str, MissCost], AfterValidator(_prefix_costs), Field(description=_PREFIX_COSTS_DOC)
]

_SOURCE_DOC = (
    "entered: miss_cost_per_million as given; measured: the agents' mean miss-to-set time (their "
    "per-class cost_us) priced as CPU time at cpu_price_per_hour"
)


class ClusterIn(In):
    name: Name
    price_per_gb_month: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] = 0.0
    target_hit_ratio: Annotated[HitRatio, Field(ge=0, le=1, allow_inf_nan=False)] = 0.9
    node_size_bytes: Annotated[ByteSize, Field(gt=0, le=2**50)] | None = None
    miss_cost_per_million: MissCost | None = None
    cpu_price_per_hour: CpuPrice | None = None
    miss_cost_source: MissCostSource = Field(default="entered", description=_SOURCE_DOC)
    prefix_miss_costs: PrefixMissCosts | None = None


class ClusterPatch(In):
    name: Name | None = None
    price_per_gb_month: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] | None = None
    target_hit_ratio: Annotated[HitRatio, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    node_size_bytes: Annotated[ByteSize, Field(gt=0, le=2**50)] | None = None
    miss_cost_per_million: MissCost | None = None
    cpu_price_per_hour: CpuPrice | None = None
    miss_cost_source: MissCostSource | None = Field(default=None, description=_SOURCE_DOC)
    prefix_miss_costs: PrefixMissCosts | None = None


class ClusterOut(Out):
    id: uuid.UUID
    name: str
    price_per_gb_month: float
    target_hit_ratio: float
    node_size_bytes: int | None
    miss_cost_per_million: float | None = None
    cpu_price_per_hour: float | None = None
    miss_cost_source: MissCostSource = "entered"
    prefix_miss_costs: dict[str, float] | None = Field(default=None, description=_PREFIX_COSTS_DOC)
    created_at: datetime
    server_count: int = 0
    # Summary of the latest state, filled by GET /clusters so overview pages need no more requests.
    measured_hit_ratio: float | None = Field(default=None, description=MEASURED_HIT_RATIO_DOC)
    allocated_bytes: int | None = Field(default=None, description="memory of the latest cluster curve")
    memory_for_target_bytes: float | None = Field(
        default=None,
        description="memory for the cluster's target hit ratio: the answer of GET "
        "/sizing/clusters/{id}/memory when its status is ok or warming_up (then provisional)",
    )
    memory_for_target_status: str | None = Field(
        default=None,
        description="status of that sizing answer (ok, warming_up, above_curve, unreachable); null "
        "without a curve",
    )
    curve_window_end: datetime | None = Field(default=None, description="null when there is no curve yet")
    open_alerts: int | None = Field(default=None, description="open alerts of this cluster")
    open_critical_alerts: int | None = Field(default=None, description="of which critical")
    status: Status | None = Field(
        default=None,
        description="no_data without a curve, critical with an open critical alert, warming_up while "
        "memcached fills on one of its nodes, warning with any open alert or below the target, else ok",
    )
    target_answer: SizingAnswer | None = Field(
        default=None,
        description="the whole answer of GET /sizing/clusters/{id}/memory for the cluster's target "
        "(-m per node, fill while warming up, band, bound); null without a curve",
    )


class ServerPatch(In):
    cluster_id: uuid.UUID | None = Field(description="the cluster to assign the server to; null to unassign")


class ServerOut(Out):
    id: uuid.UUID
    cluster_id: uuid.UUID | None
    address: str
    instance_id: str
    version: str | None
    limit_maxbytes: int | None
    settings: dict[str, Any]
    hostname: str | None
    agent_version: str | None
    first_seen_at: datetime
    last_seen_at: datetime
    last_snapshot_at: datetime | None
    # Summary, filled by GET /servers.
    loss_ratio: float | None = Field(default=None, description="event loss of the latest snapshot")
    measured_hit_ratio: float | None = Field(default=None, description=MEASURED_HIT_RATIO_DOC)
    curve_error_pp: float | None = Field(
        default=None,
        description="mean |predicted - measured| in percentage points over the last 24 hours of the "
        "accuracy record (as mean_abs_error_pp of GET /servers/{id}/accuracy)",
    )
    status: Status | None = Field(
        default=None,
        description="no_data before the first snapshot; when the agent is silent (GET /thresholds "
        "silent_after_s) warning, critical after an hour, as the agent-silent alert; warning when "
        "loss_ratio or curve_error_pp is above its threshold, else ok",
    )
    status_note: str | None = Field(
        default=None, description="why the status is not ok (or that the server is quiet), in a few words"
    )
    quiet: bool | None = Field(
        default=None,
        description="the latest window saw fewer than 1000 reads (traffic stopped): sizing answers keep "
        "resting on the last good windows and say which were left out",
    )
    loss_warning: bool | None = Field(default=None, description="loss_ratio above its threshold")
    curve_error_warning: bool | None = Field(default=None, description="curve_error_pp above its threshold")
    data_basis: Literal["watch", "stats_only"] | None = Field(
        default=None,
        description="what the latest snapshot rests on: watch (the agent reads memcached's watch "
        "stream) or stats_only (memcached refused `watch`: the curve is the agent's model fitted "
        "to `stats`, a wider band; SizingAnswer.data_basis)",
    )


class ThresholdsOut(BaseModel):
    silent_after_s: float = Field(description="a server without a snapshot for longer is silent")
    loss_ratio: float = Field(description="event loss above this ratio is a warning")
    curve_error_pp: float = Field(description="curve error above this many percentage points is a warning")
    curve_error_statistic: Literal["mean_abs_error_pp"] = Field(
        description="the statistic the curve-error warning is on: mean |predicted - measured|"
    )
    curve_error_min_windows: int = Field(description="windows the curve-error alert needs before judging")


# --- curves -----------------------------------------------------------------------------------
class ClassCurveOut(BaseModel):
    class_id: int
    chunk_size: int
    pages: int
    items: int
    requests: int
    current_items: int
    sizes_items: list[float]
    sizes_bytes: list[float]
    hit_ratios: list[float]


class MergedCurveOut(BaseModel):
    snapshot_id: uuid.UUID
    window_end: datetime
    computed_at: datetime
    age_seconds: float
    sizes_bytes: list[float]
    hit_ratio_proportional: list[float]
    hit_ratio_optimal: list[float] | None
    hit_ratio_calibrated: list[float] | None
    band_low: list[float] | None = Field(
        description="the sizing answer's band (SizingAnswer.band: its confidence, drift and loss) "
        "at each size, low side (hit rate); null without an answer"
    )
    band_high: list[float] | None = Field(description="the same band's high side (hit rate)")
    current_bytes: int
    measured_hit_ratio: float | None = Field(description=MEASURED_HIT_RATIO_DOC)
    predicted_hit_ratio: float | None
    calibration: dict[str, Any]
    advice: dict[str, Any]
    data_basis: Literal["watch", "stats_only"] = Field(
        default="watch", description="what this curve rests on (SizingAnswer.data_basis)"
    )
    windows_note: str | None = Field(
        default=None,
        description="set when newer windows were left out of the answers (quiet: traffic stopped; "
        "stream loss: e.g. right after an agent restart): this is the curve of the newest good window",
    )
    observed_max_bytes: float | None = Field(
        default=None,
        description="set when the agent's ghost does not yet see out to the curve's last point: past this "
        "memory the curve is held flat, not measured, and hit rates there are lower bounds (the sizing "
        "answer says above_curve with hit_ratio_at_least); a larger agent --ghost-factor sees further",
    )


class SnapshotSummary(BaseModel):
    id: uuid.UUID
    window_start: datetime
    window_end: datetime
    received_at: datetime
    measured_hit_ratio: float | None = Field(
        description="this window's own hit ratio (hits / reads); the figure the answers and lists state "
        "is ServerCurveOut.merged.measured_hit_ratio"
    )
    loss_ratio: float
    flagged: bool
    status: str
    data_basis: Literal["watch", "stats_only"] = Field(
        default="watch", description="what the snapshot rests on (SizingAnswer.data_basis)"
    )
    stats_model_state: str | None = Field(
        default=None,
        description="stats_only snapshots: the agent's model state (fitted, not_evicting, no_reads, "
        "no_age, no_fit); a window without a fitted model has no curve",
    )


class FlashTierOut(BaseModel):
    """memcached's flash tier (extstore) on this server, from the newest windows of its newest
    instance (hitcurve/sizing/flash.py)."""

    limit_bytes: int = Field(description="the flash file's size (ext_path SIZE, whole pages)")
    bytes_used: int = Field(description="bytes of live values on flash")
    fill_ratio: float = Field(
        description="flash pages taken / all pages (memcached evicts a page when none is free)"
    )
    header_items: int = Field(
        description="items in RAM that are headers of values on flash (not whole items)"
    )
    header_bytes: int = Field(description="the RAM those headers take (their slab chunks)")
    flash_hit_share: float | None = Field(description="of memcached's get_hits, those the flash served")
    flash_miss_share: float | None = Field(
        description="of memcached's get_hits, flash reads that found nothing: memcached counts them as hits, "
        "the client got a miss"
    )
    reads_per_s: float | None
    read_bytes_per_s: float | None
    writes_per_s: float | None
    write_bytes_per_s: float | None
    windows: int = Field(description="the windows the shares and rates are taken over")
    note: str = Field(description="what the curve means on this server: SizingAnswer.flash_note")


class ServerCurveOut(BaseModel):
    server: ServerOut
    latest_snapshot: SnapshotSummary | None
    classes: list[ClassCurveOut]
    merged: MergedCurveOut | None
    flash_tier: FlashTierOut | None = None


class ClusterCurveOut(BaseModel):
    cluster: ClusterOut
    computed_at: datetime | None = None
    age_seconds: float | None = None
    window_end: datetime | None = None
    basis: str | None = None
    sizes_bytes: list[float] | None = None
    hit_ratios: list[float] | None = None
    band_low: list[float] | None = Field(
        default=None,
        description="the cluster sizing answer's band (SizingAnswer.band) at each size, low side",
    )
    band_high: list[float] | None = Field(default=None, description="the same band's high side")
    current_bytes: int | None = None
    measured_hit_ratio: float | None = Field(default=None, description=MEASURED_HIT_RATIO_DOC)
    node_size_bytes: int | None = None
    node_counts: list[int] | None = None
    node_hit_ratios: list[float] | None = None
    server_count: int | None = None


# Where a bucket's point belongs on a time axis: its newest data, not the bucket's start (the
# dashboard drew the newest point up to a bucket's width before the newest window).
POINT_AT_DOC = (
    "the end of the newest window in the bucket: where its point is drawn (the newest point is the "
    "newest window); start and end are the bucket's bounds"
)


class HistoryPoint(BaseModel):
    start: datetime
    end: datetime
    at: datetime = Field(description=POINT_AT_DOC)
    samples: int
    measured_hit_ratio: float | None
    predicted_hit_ratio: float | None
    loss_ratio: float | None
    bytes_used: float | None
    flagged: int


class CurveAt(BaseModel):
    window_end: datetime
    computed_at: datetime
    basis: str = Field(description="calibrated or estimate")
    sizes_bytes: list[float]
    hit_ratios: list[float] = Field(description="the calibrated curve when there is one, else the estimate")
    hit_ratio_calibrated: list[float] | None = None
    hit_ratio_proportional: list[float] | None = None
    current_bytes: int | None
    measured_hit_ratio: float | None


class CurveHistoryOut(BaseModel):
    start: datetime
    end: datetime
    bucket_seconds: float
    curves: list[CurveAt] = Field(description="oldest first; the latest curve of each time bucket")


class HistoryOut(BaseModel):
    start: datetime
    end: datetime
    bucket_seconds: float
    points: list[HistoryPoint]


class AccuracyPoint(BaseModel):
    start: datetime
    end: datetime
    at: datetime = Field(description=POINT_AT_DOC)
    samples: int
    predicted_hit_ratio: float
    measured_hit_ratio: float
    error_pp: float
    abs_error_pp: float


class AccuracyOut(BaseModel):
    start: datetime
    end: datetime
    bucket_seconds: float
    samples: int
    mean_abs_error_pp: float | None
    max_abs_error_pp: float | None
    points: list[AccuracyPoint]


# --- simulations, alerts, reports, audit ------------------------------------------------------
# The simulator's policy names (simulator/src/registry.c); the worker runs whatever
# hitcurve_sim.policies() lists and worker/tests/test_policy_names.py checks the two agree.
POLICIES = (
    "lru",
    "fifo",
    "clock",
    "gclock",
    "nbq-clock",
    "baglru",
    "gdwheel",
    "mcslru",
    "clockpro",
    "arc",
    "s3fifo",
    "sieve",
    "twoq",
    "lfu",
    "gdsf",
    "opt",
    "lirs",
    "wtinylfu",
    "lhd",
    "mlclock",
)
Policy = Literal[POLICIES]  # type: ignore[valid-type]
# The simulator's two-tier model of memcached's extstore takes a flash size besides the RAM size,
# so it is no policy to ask for at one memory size: sizing/flash.py asks it for the (RAM, flash) grid.
TIER_MODELS = ("extstore",)


class SimulationIn(In):
    server_id: uuid.UUID | None = None
    cluster_id: uuid.UUID | None = None
    policies: Annotated[list[Policy], Field(min_length=1, max_length=len(POLICIES))]
    sizes_bytes: Annotated[list[Annotated[int, Field(gt=0, le=2**50)]], Field(min_length=1, max_length=64)]
    window_start: datetime | None = Field(default=None, description="default: 24 hours before window_end")
    window_end: datetime | None = Field(default=None, description="default: now")

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "server_id": "8e0b1c2e-5d4f-4c36-9d53-4b7f0f0e2a11",
                    "policies": ["lru", "gdwheel", "nbq-clock"],
                    "sizes_bytes": [1073741824, 2147483648, 4294967296],
                }
            ]
        }
    )


class SimulationResultOut(Out):
    policy: str
    size_bytes: int
    hit_ratio: float
    byte_hit_ratio: float | None
    recompute_cost_total_us: float | None
    recompute_cost_p99_us: float | None
    requests: int
    details: dict[str, Any] = Field(
        default_factory=dict,
        description="the sample the run rests on: sample_rate, sampled_requests, sampled_keys (distinct), "
        "span_seconds (traffic time the sampled requests cover), chunks, read_ratio, notes",
    )


class SimulationRunOut(Out):
    id: uuid.UUID
    server_id: uuid.UUID | None
    cluster_id: uuid.UUID | None
    policies: list[str]
    sizes_bytes: list[int]
    window_start: datetime
    window_end: datetime
    status: str
    progress: float
    error: str | None
    created_at: datetime
    enqueued_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    results: list[SimulationResultOut] = []


class AlertOut(Out):
    id: uuid.UUID
    cluster_id: uuid.UUID | None
    server_id: uuid.UUID | None
    kind: str
    severity: str
    message: str
    details: dict[str, Any]
    state: str
    first_seen_at: datetime
    last_seen_at: datetime
    resolved_at: datetime | None
    acknowledged_at: datetime | None


class SubscriptionIn(In):
    email: EmailStr
    cluster_id: uuid.UUID | None = None
    weekday: Annotated[int, Field(ge=0, le=6)] = 0
    hour_utc: Annotated[int, Field(ge=0, le=23)] = 8
    enabled: bool = True


class SubscriptionPatch(In):
    email: EmailStr | None = None
    cluster_id: uuid.UUID | None = None
    weekday: Annotated[int, Field(ge=0, le=6)] | None = None
    hour_utc: Annotated[int, Field(ge=0, le=23)] | None = None
    enabled: bool | None = None


class SubscriptionOut(Out):
    id: uuid.UUID
    email: str
    cluster_id: uuid.UUID | None
    weekday: int
    hour_utc: int
    enabled: bool
    created_at: datetime
    last_sent_at: datetime | None
    confirmed_at: datetime | None = Field(
        description="when the recipient confirmed; null: pending, no report is sent to it yet"
    )
    confirmation_sent_at: datetime | None = Field(description="when the last confirmation mail went out")


class AuditOut(Out):
    id: int
    at: datetime
    action: str
    actor_user_id: uuid.UUID | None
    actor_key_id: uuid.UUID | None
    target_type: str | None
    target_id: str | None
    ip: str | None
    details: dict[str, Any]


class ReportPreviewOut(BaseModel):
    """The weekly e-mail as it would be sent now to the logged-in user (charts as data: URLs)."""

    subject: str
    to: str
    subscribed: bool = Field(
        description="whether `to` has a subscription to this report (else no unsubscribe link)"
    )
    html: str
    text: str


class ReportTestIn(In):
    cluster_id: uuid.UUID | None = Field(
        default=None, description="one cluster of the organization; null: all"
    )


class _MailedLinkOut(BaseModel):
    """What a report mail's link (confirm, unsubscribe) did, for the page that follows it."""

    subscription_id: uuid.UUID
    email: str
    org_name: str
    about: str = Field(description="the cluster's name, or 'all clusters'")


class ReportConfirmedOut(_MailedLinkOut):
    already: bool = Field(description="the address was already confirmed before this request")


class UnsubscribeOut(_MailedLinkOut):
    already: bool = Field(description="the subscription was already off (or gone) before this request")


# --- the agent release and its install blocks --------------------------------------------------
class AgentArtefactOut(BaseModel):
    name: str
    kind: Literal["deb", "tarball"]
    version: str
    arch: str
    sha256: str
    size_bytes: int
    url: str = Field(description="where this Hitcurve serves it")


class AgentReleaseOut(BaseModel):
    available: bool = Field(description="false: this Hitcurve serves no agent release (detail says why)")
    version: str | None
    files: list[AgentArtefactOut]
    sha256sums_url: str | None
    detail: str | None = None


class AgentInstallOut(BaseModel):
    variant: str
    title: str
    needs: str = Field(description="what the cache host must have")
    text: str = Field(description="the block to paste, with key_placeholder where the agent key goes")
    key_placeholder: str
    variants: list[str] = Field(description="every variant this endpoint answers")
