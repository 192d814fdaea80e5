"""Who is calling, once authenticated (api/deps.py authenticates): a browser session with its
role, an API token with its scope, or an agent key. The ingest and the benchmarks act as one too."""

import uuid
from dataclasses import dataclass

ROLE_RANK = {"viewer": 0, "member": 1, "owner": 2}


@dataclass
class Principal:
    kind: str  # "session", "api_token" or "agent_key"
    org_id: uuid.UUID
    user_id: uuid.UUID | None = None
    role: str | None = None  # session only
    scope: str | None = None  # api token only
    key_id: uuid.UUID | None = None  # api token or agent key id
    session_id: uuid.UUID | None = None

    @property
    def user(self) -> uuid.UUID:
        """The logged-in user's id (sessions always carry one: get_user admits sessions only)."""
        assert self.user_id is not None
        return self.user_id

    @property
    def can_write(self) -> bool:
        """Member or owner in the browser; read_write tokens (simulation requests only)."""
        if self.kind == "session":
            return ROLE_RANK.get(self.role or "", -1) >= ROLE_RANK["member"]
        return self.kind == "api_token" and self.scope == "read_write"
