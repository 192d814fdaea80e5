"""policy_corrections.hit_ratio_ghost_view: the agent's view above today's memory (memcached at the
reference size plus its eviction-fed ghost), simulated with the policy correction

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 01:40:00

The worker adds the lift (policy - ghost view) to the curve above today's memory
(worker/hitcurve_worker/policy_correction.py). NULL on every row stored before this revision:
those corrections apply below today's memory only, as before, until the next recomputation.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        'policy_corrections',
        sa.Column('hit_ratio_ghost_view', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    )


def downgrade() -> None:
    op.drop_column('policy_corrections', 'hit_ratio_ghost_view')
