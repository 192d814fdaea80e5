"""notification channels of an organization and the delivery of each alert state change to them

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 04:16:51

A delivery is unique per (channel, alert, event): an alert opening or resolving reaches each
channel once however often the worker's task runs.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('notification_channels',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('secret', sa.String(length=128), nullable=True),
    sa.Column('routing_key', sa.String(length=128), nullable=True),
    sa.Column('min_severity', sa.String(length=16), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('created_by', sa.Uuid(), nullable=True),
    sa.CheckConstraint("kind IN ('webhook', 'slack', 'pagerduty', 'alertmanager')", name=op.f('ck_notification_channels_kind')),
    sa.CheckConstraint("min_severity IN ('info', 'warning', 'critical')", name=op.f('ck_notification_channels_min_severity')),
    sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_notification_channels_created_by_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_notification_channels_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notification_channels')),
    sa.UniqueConstraint('org_id', 'name', name='uq_notification_channels_name')
    )
    op.create_index(op.f('ix_notification_channels_org_id'), 'notification_channels', ['org_id'], unique=False)
    op.create_table('alert_deliveries',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('channel_id', sa.Uuid(), nullable=False),
    sa.Column('alert_id', sa.Uuid(), nullable=True),
    sa.Column('event', sa.String(length=16), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('status', sa.String(length=16), server_default='pending', nullable=False),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('response_code', sa.SmallInteger(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("(alert_id IS NULL) = (event = 'test')", name=op.f('ck_alert_deliveries_alert_or_test')),
    sa.CheckConstraint("event IN ('opened', 'resolved', 'test')", name=op.f('ck_alert_deliveries_event')),
    sa.CheckConstraint("status IN ('pending', 'retrying', 'delivered', 'failed')", name=op.f('ck_alert_deliveries_status')),
    sa.ForeignKeyConstraint(['alert_id'], ['alerts.id'], name=op.f('fk_alert_deliveries_alert_id_alerts'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['channel_id'], ['notification_channels.id'], name=op.f('fk_alert_deliveries_channel_id_notification_channels'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_alert_deliveries_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_alert_deliveries')),
    sa.UniqueConstraint('channel_id', 'alert_id', 'event', name='uq_alert_deliveries_change'),
    sa.UniqueConstraint('key', name=op.f('uq_alert_deliveries_key'))
    )
    op.create_index('ix_alert_deliveries_channel', 'alert_deliveries', ['channel_id', 'created_at'], unique=False)
    op.create_index('ix_alert_deliveries_due', 'alert_deliveries', ['next_attempt_at'], unique=False, postgresql_where="status IN ('pending', 'retrying')")
    op.create_index(op.f('ix_alert_deliveries_org_id'), 'alert_deliveries', ['org_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_alert_deliveries_org_id'), table_name='alert_deliveries')
    op.drop_index('ix_alert_deliveries_due', table_name='alert_deliveries', postgresql_where="status IN ('pending', 'retrying')")
    op.drop_index('ix_alert_deliveries_channel', table_name='alert_deliveries')
    op.drop_table('alert_deliveries')
    op.drop_index(op.f('ix_notification_channels_org_id'), table_name='notification_channels')
    op.drop_table('notification_channels')
