"""snapshot_classes.ghost_reach_items/ghost_filters: the agent's per-class `curve.ghost_reach_items`
and `curve.ghost_filters`, stored so that the worker sees them

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 20:00:00

The worker builds the class curves from snapshot_classes columns, and these two fields had none:
outside the TTL path the server curve's calibration never carried ghost_reach_bytes/ghost_filters
(no above_curve bound from the ghost's reach, no ghost span in the band). NULL when the agent did
not send them (older agents), as for every row stored before this revision. snapshot_classes is
partitioned by day: ALTER TABLE on the parent adds the columns to every partition.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('snapshot_classes', sa.Column('ghost_reach_items', sa.BigInteger(), nullable=True))
    op.add_column('snapshot_classes', sa.Column('ghost_filters', sa.SmallInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column('snapshot_classes', 'ghost_filters')
    op.drop_column('snapshot_classes', 'ghost_reach_items')
