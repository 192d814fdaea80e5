"""Every model module is imported here so Base.metadata knows all tables (Alembic needs it)."""

from hitcurve.models.base import Base
from hitcurve.models.corrections import PolicyCorrection
from hitcurve.models.curves import AccuracyRecord, ClusterCurve, ServerCurve
from hitcurve.models.ingest import Snapshot, TraceChunk
from hitcurve.models.inventory import Cluster, Server
from hitcurve.models.keys import AgentKey, ApiToken
from hitcurve.models.notifications import AlertDelivery, InstallSettings, NotificationChannel
from hitcurve.models.ops import (
    Alert,
    AuditLog,
    ReportDelivery,
    ReportSubscription,
    SimulationResult,
    SimulationRun,
)
from hitcurve.models.tenancy import (
    Invitation,
    LoginAttempt,
    Membership,
    Organization,
    PasswordReset,
    SignupRequest,
    User,
    UserSession,
)

__all__ = [
    "AccuracyRecord",
    "AgentKey",
    "Alert",
    "AlertDelivery",
    "ApiToken",
    "AuditLog",
    "Base",
    "Cluster",
    "ClusterCurve",
    "InstallSettings",
    "Invitation",
    "LoginAttempt",
    "Membership",
    "NotificationChannel",
    "Organization",
    "PasswordReset",
    "PolicyCorrection",
    "ReportDelivery",
    "ReportSubscription",
    "Server",
    "ServerCurve",
    "SimulationResult",
    "SignupRequest",
    "SimulationRun",
    "Snapshot",
    "TraceChunk",
    "User",
    "UserSession",
]
