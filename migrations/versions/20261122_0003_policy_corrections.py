"""policy corrections: memcached's segmented LRU versus LRU, per server, from its sampled trace

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 16:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('policy_corrections',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('server_id', sa.Uuid(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('policy', sa.String(length=32), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('trace_start', sa.DateTime(timezone=True), nullable=True),
    sa.Column('trace_end', sa.DateTime(timezone=True), nullable=True),
    sa.Column('received_through', sa.DateTime(timezone=True), nullable=True),
    sa.Column('chunks', sa.Integer(), nullable=False),
    sa.Column('sample_rate', sa.Float(), nullable=True),
    sa.Column('sampled_requests', sa.BigInteger(), nullable=False),
    sa.Column('sampled_gets', sa.BigInteger(), nullable=False),
    sa.Column('warmup', sa.Float(), nullable=True),
    sa.Column('sample_adjust', sa.Float(), nullable=True),
    sa.Column('reference_bytes', sa.BigInteger(), nullable=True),
    sa.Column('reference_items', sa.BigInteger(), nullable=True),
    sa.Column('sizes_bytes', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('hit_ratio_lru', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('hit_ratio_policy', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('notes', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.CheckConstraint("status IN ('ok', 'insufficient')", name=op.f('ck_policy_corrections_status')),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_policy_corrections_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], name=op.f('fk_policy_corrections_server_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_policy_corrections')),
    sa.UniqueConstraint('server_id', name=op.f('uq_policy_corrections_server_id'))
    )
    op.create_index(op.f('ix_policy_corrections_org_id'), 'policy_corrections', ['org_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_policy_corrections_org_id'), table_name='policy_corrections')
    op.drop_table('policy_corrections')
