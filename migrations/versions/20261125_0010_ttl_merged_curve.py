"""snapshots.ttl_sizes_bytes/ttl_hit_ratios: the agent's merged TTL-aware curve, which
answers sizing when the window's traffic carries TTLs (snapshots.ttl_aware, hitcurve/rules/ttl.py)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 08:00:00

The snapshot's top-level `ttl_points` (bytes of memory -> hit ratio, SHARDS++ over every class);
NULL when the agent sent none. From this revision on `ttl_aware` is true when the agent's
TTL-aware and TTL-oblivious curves differ by at least hitcurve.rules.ttl.TTL_CURVE_GAP_PP; rows stored
before keep the flag of revision 0008 (the worker only uses it with a stored merged curve).
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('snapshots', sa.Column('ttl_sizes_bytes', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True))
    op.add_column('snapshots', sa.Column('ttl_hit_ratios', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True))


def downgrade() -> None:
    op.drop_column('snapshots', 'ttl_hit_ratios')
    op.drop_column('snapshots', 'ttl_sizes_bytes')
