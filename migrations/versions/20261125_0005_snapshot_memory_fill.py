"""snapshots: how full memcached's memory was at the window's end (the agent's `memory` object)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 01:45:00

All nullable: older agents do not send it, and a server is then never called warming up.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('snapshots', sa.Column('total_malloced', sa.BigInteger(), nullable=True))
    op.add_column('snapshots', sa.Column('memory_full', sa.Boolean(), nullable=True))
    op.add_column('snapshots', sa.Column('evictions_total', sa.BigInteger(), nullable=True))
    op.add_column('snapshots', sa.Column('hash_bytes', sa.BigInteger(), nullable=True))
    op.add_column('snapshots', sa.Column('curr_connections', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    for col in ('curr_connections', 'hash_bytes', 'evictions_total', 'memory_full', 'total_malloced'):
        op.drop_column('snapshots', col)
