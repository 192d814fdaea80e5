"""snapshot_classes.ttl_sizes_items/ttl_hit_ratios, snapshots.ttl_aware: the TTL-aware class curves the agent sends
and whether the window's traffic carries TTLs (stored; sizing stays on the LRU curves)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 05:30:00

`ttl_sizes_items`/`ttl_hit_ratios` are the class's `curve.ttl_points` (the agent's SHARDS++ curve
has sizes of its own, not those of `points`); NULL when the agent sent none. `ttl_aware` is true when every class
carries them and expiry changed the window's curve (the agent saw reads of expired items, or its
TTL-aware working set is smaller than the oblivious one); NULL for agents without the breakdown.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('snapshot_classes', sa.Column('ttl_sizes_items', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True))
    op.add_column('snapshot_classes', sa.Column('ttl_hit_ratios', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True))
    op.add_column('snapshots', sa.Column('ttl_aware', sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column('snapshots', 'ttl_aware')
    op.drop_column('snapshot_classes', 'ttl_hit_ratios')
    op.drop_column('snapshot_classes', 'ttl_sizes_items')
