"""snapshots: the basis a window rests on (`watch`, or `stats_only` where memcached refused `watch`)
and the agent's stats-only model

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 04:40:00

Existing rows came from the watch stream: `basis` defaults to 'watch'. `stats_model` is the
agent's `stats_model` object (Che + Zipf fit, 100 points over items) of a stats-only window,
NULL otherwise.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('snapshots', sa.Column('basis', sa.String(length=16), server_default='watch', nullable=False))
    op.add_column('snapshots', sa.Column('stats_model', postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.create_check_constraint(op.f('ck_snapshots_basis'), 'snapshots', "basis IN ('watch', 'stats_only')")


def downgrade() -> None:
    op.drop_constraint(op.f('ck_snapshots_basis'), 'snapshots', type_='check')
    op.drop_column('snapshots', 'stats_model')
    op.drop_column('snapshots', 'basis')
