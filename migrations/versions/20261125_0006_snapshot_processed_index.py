"""snapshots: index on processed_at for the upload-to-curve lag in /health

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 04:40:00

/health reads the newest processed snapshots (ORDER BY processed_at DESC LIMIT n); without the
index that is a scan of the whole table on every health check.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        'ix_snapshots_processed_at',
        'snapshots',
        ['processed_at'],
        postgresql_where=sa.text('processed_at IS NOT NULL'),
    )


def downgrade() -> None:
    op.drop_index('ix_snapshots_processed_at', table_name='snapshots')
