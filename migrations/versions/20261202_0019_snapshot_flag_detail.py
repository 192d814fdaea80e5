"""snapshots.flag_detail: why the agent flagged a window (stream loss, its self-check, a flush)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02 06:30:00

Agents since this revision say in `loss` why a flagged window is flagged (`flagged_by`, the
self-check's figures when it disagreed, the loss threshold); the API stores it at ingest
(hitcurve.ingest.snapshot_rows.flag_json) so the answers can say why a window was left out.
Rows stored before it keep NULL: their flagged windows read "stream loss", as they did.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0019'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        'snapshots', sa.Column('flag_detail', postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )


def downgrade() -> None:
    op.drop_column('snapshots', 'flag_detail')
