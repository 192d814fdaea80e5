"""snapshots.extstore: the server's flash tier as the agent measured it in the window

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02 06:30:00

The agent's optional `extstore` object (docs/agent-protocol.md, "Extstore") without its `stream`
part: settings, RAM headers, flash use and the window's flash counters. NULL for a server with no
flash tier and for rows stored before this revision (their payloads came from agents that did not
send it).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("snapshots", sa.Column("extstore", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("snapshots", "extstore")
