"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-22 12:53:01.762117
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Generated from the models, then reviewed.
    op.create_table('login_attempts',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('ip', sa.String(length=64), nullable=False),
    sa.Column('succeeded', sa.Boolean(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_login_attempts'))
    )
    op.create_index('ix_login_attempts_email_at', 'login_attempts', ['email', 'at'], unique=False)
    op.create_index('ix_login_attempts_ip_at', 'login_attempts', ['ip', 'at'], unique=False)
    op.create_table('organizations',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_organizations'))
    )
    op.create_table('users',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('display_name', sa.String(length=200), nullable=False),
    sa.Column('password_hash', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('password_changed_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('email', name=op.f('uq_users_email'))
    )
    op.create_table('agent_keys',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('created_by', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_agent_keys_created_by_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_agent_keys_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_agent_keys')),
    sa.UniqueConstraint('key_hash', name=op.f('uq_agent_keys_key_hash'))
    )
    op.create_index(op.f('ix_agent_keys_org_id'), 'agent_keys', ['org_id'], unique=False)
    op.create_table('api_tokens',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('scope', sa.String(length=16), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_by', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("scope IN ('read', 'read_write')", name=op.f('ck_api_tokens_scope')),
    sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_api_tokens_created_by_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_api_tokens_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    op.create_index(op.f('ix_api_tokens_org_id'), 'api_tokens', ['org_id'], unique=False)
    op.create_table('audit_log',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=True),
    sa.Column('actor_user_id', sa.Uuid(), nullable=True),
    sa.Column('actor_key_id', sa.Uuid(), nullable=True),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('target_type', sa.String(length=32), nullable=True),
    sa.Column('target_id', sa.String(length=64), nullable=True),
    sa.Column('ip', sa.String(length=64), nullable=True),
    sa.Column('details', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['actor_user_id'], ['users.id'], name=op.f('fk_audit_log_actor_user_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_audit_log_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_log'))
    )
    op.create_index('ix_audit_log_org_at', 'audit_log', ['org_id', 'at'], unique=False)
    op.create_table('clusters',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('price_per_gb_month', sa.Float(), nullable=False),
    sa.Column('target_hit_ratio', sa.Float(), nullable=False),
    sa.Column('node_size_bytes', sa.BigInteger(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint('price_per_gb_month >= 0', name=op.f('ck_clusters_price')),
    sa.CheckConstraint('target_hit_ratio >= 0 AND target_hit_ratio <= 1', name=op.f('ck_clusters_target_hit_ratio')),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_clusters_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_clusters')),
    sa.UniqueConstraint('org_id', 'name', name='uq_clusters_org_name')
    )
    op.create_index(op.f('ix_clusters_org_id'), 'clusters', ['org_id'], unique=False)
    op.create_table('memberships',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("role IN ('owner', 'member', 'viewer')", name=op.f('ck_memberships_role')),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_memberships_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memberships_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memberships')),
    sa.UniqueConstraint('org_id', 'user_id', name='uq_memberships_org_user')
    )
    op.create_index(op.f('ix_memberships_org_id'), 'memberships', ['org_id'], unique=False)
    op.create_index(op.f('ix_memberships_user_id'), 'memberships', ['user_id'], unique=False)
    op.create_table('user_sessions',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('csrf_token', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('last_seen_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ip', sa.String(length=64), nullable=True),
    sa.Column('user_agent', sa.String(length=300), nullable=True),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_user_sessions_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_user_sessions_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_user_sessions')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_user_sessions_token_hash'))
    )
    op.create_index(op.f('ix_user_sessions_org_id'), 'user_sessions', ['org_id'], unique=False)
    op.create_index(op.f('ix_user_sessions_user_id'), 'user_sessions', ['user_id'], unique=False)
    op.create_table('cluster_curves',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('cluster_id', sa.Uuid(), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('window_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('basis', sa.String(length=16), nullable=False),
    sa.Column('sizes_bytes', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=False),
    sa.Column('hit_ratios', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=False),
    sa.Column('band_low', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('band_high', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('current_bytes', sa.BigInteger(), nullable=False),
    sa.Column('measured_hit_ratio', sa.Float(), nullable=True),
    sa.Column('node_size_bytes', sa.BigInteger(), nullable=True),
    sa.Column('node_counts', postgresql.ARRAY(sa.Integer(), dimensions=1), nullable=True),
    sa.Column('node_hit_ratios', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('server_count', sa.Integer(), nullable=False),
    sa.Column('inputs', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.ForeignKeyConstraint(['cluster_id'], ['clusters.id'], name=op.f('fk_cluster_curves_cluster_id_clusters'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_cluster_curves_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_cluster_curves'))
    )
    op.create_index('ix_cluster_curves_cluster_computed', 'cluster_curves', ['cluster_id', 'computed_at'], unique=False)
    op.create_index(op.f('ix_cluster_curves_org_id'), 'cluster_curves', ['org_id'], unique=False)
    op.create_table('report_subscriptions',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=True),
    sa.Column('cluster_id', sa.Uuid(), nullable=True),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('weekday', sa.SmallInteger(), nullable=False),
    sa.Column('hour_utc', sa.SmallInteger(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('last_sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint('hour_utc >= 0 AND hour_utc <= 23', name=op.f('ck_report_subscriptions_hour_utc')),
    sa.CheckConstraint('weekday >= 0 AND weekday <= 6', name=op.f('ck_report_subscriptions_weekday')),
    sa.ForeignKeyConstraint(['cluster_id'], ['clusters.id'], name=op.f('fk_report_subscriptions_cluster_id_clusters'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_report_subscriptions_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_report_subscriptions_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_report_subscriptions'))
    )
    op.create_index(op.f('ix_report_subscriptions_org_id'), 'report_subscriptions', ['org_id'], unique=False)
    op.create_table('servers',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('cluster_id', sa.Uuid(), nullable=True),
    sa.Column('address', sa.String(length=300), nullable=False),
    sa.Column('instance_id', sa.String(length=100), nullable=False),
    sa.Column('version', sa.String(length=64), nullable=True),
    sa.Column('limit_maxbytes', sa.BigInteger(), nullable=True),
    sa.Column('settings', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('hostname', sa.String(length=255), nullable=True),
    sa.Column('agent_version', sa.String(length=64), nullable=True),
    sa.Column('agent_key_id', sa.Uuid(), nullable=True),
    sa.Column('first_seen_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('last_seen_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('last_snapshot_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['agent_key_id'], ['agent_keys.id'], name=op.f('fk_servers_agent_key_id_agent_keys'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['cluster_id'], ['clusters.id'], name=op.f('fk_servers_cluster_id_clusters'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_servers_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_servers')),
    sa.UniqueConstraint('org_id', 'address', name='uq_servers_org_address')
    )
    op.create_index(op.f('ix_servers_cluster_id'), 'servers', ['cluster_id'], unique=False)
    op.create_index(op.f('ix_servers_org_id'), 'servers', ['org_id'], unique=False)
    op.create_table('alerts',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('cluster_id', sa.Uuid(), nullable=True),
    sa.Column('server_id', sa.Uuid(), nullable=True),
    sa.Column('kind', sa.String(length=64), nullable=False),
    sa.Column('severity', sa.String(length=16), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('details', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('state', sa.String(length=16), server_default='open', nullable=False),
    sa.Column('first_seen_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('last_seen_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('acknowledged_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('acknowledged_by', sa.Uuid(), nullable=True),
    sa.CheckConstraint("severity IN ('info', 'warning', 'critical')", name=op.f('ck_alerts_severity')),
    sa.CheckConstraint("state IN ('open', 'resolved')", name=op.f('ck_alerts_state')),
    sa.ForeignKeyConstraint(['acknowledged_by'], ['users.id'], name=op.f('fk_alerts_acknowledged_by_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['cluster_id'], ['clusters.id'], name=op.f('fk_alerts_cluster_id_clusters'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_alerts_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], name=op.f('fk_alerts_server_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_alerts'))
    )
    op.create_index(op.f('ix_alerts_org_id'), 'alerts', ['org_id'], unique=False)
    op.create_index('uq_alerts_open_subject', 'alerts', ['org_id', 'kind', sa.literal_column("coalesce(cluster_id, '00000000-0000-0000-0000-000000000000'::uuid)"), sa.literal_column("coalesce(server_id, '00000000-0000-0000-0000-000000000000'::uuid)")], unique=True, postgresql_where=sa.text("state = 'open'"))
    op.create_table('report_deliveries',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('subscription_id', sa.Uuid(), nullable=False),
    sa.Column('period_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('period_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_report_deliveries_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['subscription_id'], ['report_subscriptions.id'], name=op.f('fk_report_deliveries_subscription_id_report_subscriptions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_report_deliveries')),
    sa.UniqueConstraint('subscription_id', 'period_start', name='uq_report_deliveries_period')
    )
    op.create_index(op.f('ix_report_deliveries_org_id'), 'report_deliveries', ['org_id'], unique=False)
    op.create_table('simulation_runs',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('cluster_id', sa.Uuid(), nullable=True),
    sa.Column('server_id', sa.Uuid(), nullable=True),
    sa.Column('policies', postgresql.ARRAY(sa.String(length=32), dimensions=1), nullable=False),
    sa.Column('sizes_bytes', postgresql.ARRAY(sa.BigInteger(), dimensions=1), nullable=False),
    sa.Column('window_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('window_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=16), server_default='pending', nullable=False),
    sa.Column('progress', sa.Float(), server_default='0', nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('requested_by', sa.Uuid(), nullable=True),
    sa.Column('requested_by_token', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('enqueued_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("status IN ('pending', 'running', 'done', 'failed')", name=op.f('ck_simulation_runs_status')),
    sa.CheckConstraint('(cluster_id IS NULL) <> (server_id IS NULL)', name=op.f('ck_simulation_runs_one_subject')),
    sa.CheckConstraint('progress >= 0 AND progress <= 1', name=op.f('ck_simulation_runs_progress')),
    sa.ForeignKeyConstraint(['cluster_id'], ['clusters.id'], name=op.f('fk_simulation_runs_cluster_id_clusters'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_simulation_runs_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['requested_by'], ['users.id'], name=op.f('fk_simulation_runs_requested_by_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['requested_by_token'], ['api_tokens.id'], name=op.f('fk_simulation_runs_requested_by_token_api_tokens'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], name=op.f('fk_simulation_runs_server_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_simulation_runs'))
    )
    op.create_index(op.f('ix_simulation_runs_org_id'), 'simulation_runs', ['org_id'], unique=False)
    op.create_table('snapshots',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('server_id', sa.Uuid(), nullable=False),
    sa.Column('agent_key_id', sa.Uuid(), nullable=True),
    sa.Column('instance_id', sa.String(length=100), nullable=False),
    sa.Column('window_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('window_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('limit_maxbytes', sa.BigInteger(), nullable=False),
    sa.Column('curve_points', sa.Integer(), nullable=False),
    sa.Column('cmd_get', sa.BigInteger(), nullable=False),
    sa.Column('get_hits', sa.BigInteger(), nullable=False),
    sa.Column('get_misses', sa.BigInteger(), nullable=False),
    sa.Column('bytes_used', sa.BigInteger(), nullable=False),
    sa.Column('curr_items', sa.BigInteger(), nullable=False),
    sa.Column('measured_hit_ratio', sa.Float(), nullable=True),
    sa.Column('loss_ratio', sa.Float(), nullable=False),
    sa.Column('flagged', sa.Boolean(), nullable=False),
    sa.Column('payload', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('status', sa.String(length=16), server_default='pending', nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('enqueued_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('processed_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("status IN ('pending', 'processed', 'failed', 'parked')", name=op.f('ck_snapshots_status')),
    sa.ForeignKeyConstraint(['agent_key_id'], ['agent_keys.id'], name=op.f('fk_snapshots_agent_key_id_agent_keys'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_snapshots_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], name=op.f('fk_snapshots_server_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshots'))
    )
    op.create_index(op.f('ix_snapshots_org_id'), 'snapshots', ['org_id'], unique=False)
    op.create_index('ix_snapshots_pending', 'snapshots', ['status', 'received_at'], unique=False, postgresql_where=sa.text("status IN ('pending','failed')"))
    op.create_index('ix_snapshots_server_window', 'snapshots', ['server_id', 'window_end'], unique=False)
    op.create_table('trace_chunks',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('server_id', sa.Uuid(), nullable=False),
    sa.Column('agent_key_id', sa.Uuid(), nullable=True),
    sa.Column('instance_id', sa.String(length=100), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('window_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('window_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('sample_rate', sa.Float(), nullable=False),
    sa.Column('record_count', sa.Integer(), nullable=False),
    sa.Column('data_format', sa.String(length=16), nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('status', sa.String(length=16), server_default='pending', nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('enqueued_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('processed_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("status IN ('pending', 'processed', 'failed', 'parked')", name=op.f('ck_trace_chunks_status')),
    sa.ForeignKeyConstraint(['agent_key_id'], ['agent_keys.id'], name=op.f('fk_trace_chunks_agent_key_id_agent_keys'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_trace_chunks_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], name=op.f('fk_trace_chunks_server_id_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_trace_chunks'))
    )
    op.create_index(op.f('ix_trace_chunks_org_id'), 'trace_chunks', ['org_id'], unique=False)
    op.create_index('ix_trace_chunks_pending', 'trace_chunks', ['status', 'received_at'], unique=False, postgresql_where=sa.text("status IN ('pending','failed')"))
    op.create_index('ix_trace_chunks_server_start', 'trace_chunks', ['server_id', 'window_start'], unique=False)
    op.create_table('accuracy_records',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('server_id', sa.Uuid(), nullable=False),
    sa.Column('snapshot_id', sa.Uuid(), nullable=False),
    sa.Column('predicted_from_snapshot_id', sa.Uuid(), nullable=True),
    sa.Column('window_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('window_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('memory_bytes', sa.BigInteger(), nullable=False),
    sa.Column('predicted_hit_ratio', sa.Float(), nullable=False),
    sa.Column('measured_hit_ratio', sa.Float(), nullable=False),
    sa.Column('error_pp', sa.Float(), nullable=False),
    sa.Column('basis', sa.String(length=16), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_accuracy_records_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['predicted_from_snapshot_id'], ['snapshots.id'], name=op.f('fk_accuracy_records_predicted_from_snapshot_id_snapshots'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], name=op.f('fk_accuracy_records_server_id_servers'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_accuracy_records_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_accuracy_records')),
    sa.UniqueConstraint('snapshot_id', name=op.f('uq_accuracy_records_snapshot_id'))
    )
    op.create_index(op.f('ix_accuracy_records_org_id'), 'accuracy_records', ['org_id'], unique=False)
    op.create_index('ix_accuracy_records_server_window', 'accuracy_records', ['server_id', 'window_end'], unique=False)
    op.create_table('server_curves',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('server_id', sa.Uuid(), nullable=False),
    sa.Column('snapshot_id', sa.Uuid(), nullable=False),
    sa.Column('window_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('sizes_bytes', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=False),
    sa.Column('hit_ratio_proportional', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=False),
    sa.Column('hit_ratio_optimal', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('hit_ratio_calibrated', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('band_low', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('band_high', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=True),
    sa.Column('current_bytes', sa.BigInteger(), nullable=False),
    sa.Column('measured_hit_ratio', sa.Float(), nullable=True),
    sa.Column('predicted_hit_ratio', sa.Float(), nullable=True),
    sa.Column('calibration', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('advice', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_server_curves_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], name=op.f('fk_server_curves_server_id_servers'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_server_curves_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_server_curves')),
    sa.UniqueConstraint('snapshot_id', name=op.f('uq_server_curves_snapshot_id'))
    )
    op.create_index(op.f('ix_server_curves_org_id'), 'server_curves', ['org_id'], unique=False)
    op.create_index('ix_server_curves_server_window', 'server_curves', ['server_id', 'window_end'], unique=False)
    op.create_table('simulation_results',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('run_id', sa.Uuid(), nullable=False),
    sa.Column('policy', sa.String(length=32), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('hit_ratio', sa.Float(), nullable=False),
    sa.Column('byte_hit_ratio', sa.Float(), nullable=True),
    sa.Column('recompute_cost_total_us', sa.Float(), nullable=True),
    sa.Column('recompute_cost_p99_us', sa.Float(), nullable=True),
    sa.Column('requests', sa.BigInteger(), nullable=False),
    sa.Column('details', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_simulation_results_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['simulation_runs.id'], name=op.f('fk_simulation_results_run_id_simulation_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_simulation_results')),
    sa.UniqueConstraint('run_id', 'policy', 'size_bytes', name='uq_simulation_results_cell')
    )
    op.create_index(op.f('ix_simulation_results_org_id'), 'simulation_results', ['org_id'], unique=False)
    op.create_index(op.f('ix_simulation_results_run_id'), 'simulation_results', ['run_id'], unique=False)
    op.create_table('snapshot_classes',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('snapshot_id', sa.Uuid(), nullable=False),
    sa.Column('class_id', sa.SmallInteger(), nullable=False),
    sa.Column('chunk_size', sa.Integer(), nullable=False),
    sa.Column('pages', sa.Integer(), nullable=False),
    sa.Column('items', sa.BigInteger(), nullable=False),
    sa.Column('evictions', sa.BigInteger(), nullable=False),
    sa.Column('requests', sa.BigInteger(), nullable=False),
    sa.Column('current_items', sa.BigInteger(), nullable=False),
    sa.Column('sizes_items', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=False),
    sa.Column('hit_ratios', postgresql.ARRAY(sa.DOUBLE_PRECISION(), dimensions=1), nullable=False),
    sa.Column('cost_count', sa.BigInteger(), nullable=True),
    sa.Column('cost_mean_us', sa.Float(), nullable=True),
    sa.Column('cost_p50_us', sa.Float(), nullable=True),
    sa.Column('cost_p90_us', sa.Float(), nullable=True),
    sa.Column('cost_p99_us', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_snapshot_classes_org_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['snapshot_id'], ['snapshots.id'], name=op.f('fk_snapshot_classes_snapshot_id_snapshots'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshot_classes')),
    sa.UniqueConstraint('snapshot_id', 'class_id', name='uq_snapshot_classes_snapshot_class')
    )
    op.create_index(op.f('ix_snapshot_classes_org_id'), 'snapshot_classes', ['org_id'], unique=False)
    op.create_index(op.f('ix_snapshot_classes_snapshot_id'), 'snapshot_classes', ['snapshot_id'], unique=False)
    # Storage choices the models cannot express: lz4 for the JSON payloads (faster than pglz at
    # ingestion), no recompression of trace data that is already deflated (npz).
    op.execute("""
        DO $$ BEGIN
            ALTER TABLE snapshots ALTER COLUMN payload SET COMPRESSION lz4;
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;  -- built without lz4
        END $$
    """)
    op.execute("ALTER TABLE trace_chunks ALTER COLUMN data SET STORAGE EXTERNAL")


def downgrade() -> None:
    # Generated from the models, then reviewed.
    op.drop_index(op.f('ix_snapshot_classes_snapshot_id'), table_name='snapshot_classes')
    op.drop_index(op.f('ix_snapshot_classes_org_id'), table_name='snapshot_classes')
    op.drop_table('snapshot_classes')
    op.drop_index(op.f('ix_simulation_results_run_id'), table_name='simulation_results')
    op.drop_index(op.f('ix_simulation_results_org_id'), table_name='simulation_results')
    op.drop_table('simulation_results')
    op.drop_index('ix_server_curves_server_window', table_name='server_curves')
    op.drop_index(op.f('ix_server_curves_org_id'), table_name='server_curves')
    op.drop_table('server_curves')
    op.drop_index('ix_accuracy_records_server_window', table_name='accuracy_records')
    op.drop_index(op.f('ix_accuracy_records_org_id'), table_name='accuracy_records')
    op.drop_table('accuracy_records')
    op.drop_index('ix_trace_chunks_server_start', table_name='trace_chunks')
    op.drop_index('ix_trace_chunks_pending', table_name='trace_chunks', postgresql_where=sa.text("status IN ('pending','failed')"))
    op.drop_index(op.f('ix_trace_chunks_org_id'), table_name='trace_chunks')
    op.drop_table('trace_chunks')
    op.drop_index('ix_snapshots_server_window', table_name='snapshots')
    op.drop_index('ix_snapshots_pending', table_name='snapshots', postgresql_where=sa.text("status IN ('pending','failed')"))
    op.drop_index(op.f('ix_snapshots_org_id'), table_name='snapshots')
    op.drop_table('snapshots')
    op.drop_index(op.f('ix_simulation_runs_org_id'), table_name='simulation_runs')
    op.drop_table('simulation_runs')
    op.drop_index(op.f('ix_report_deliveries_org_id'), table_name='report_deliveries')
    op.drop_table('report_deliveries')
    op.drop_index('uq_alerts_open_subject', table_name='alerts', postgresql_where=sa.text("state = 'open'"))
    op.drop_index(op.f('ix_alerts_org_id'), table_name='alerts')
    op.drop_table('alerts')
    op.drop_index(op.f('ix_servers_org_id'), table_name='servers')
    op.drop_index(op.f('ix_servers_cluster_id'), table_name='servers')
    op.drop_table('servers')
    op.drop_index(op.f('ix_report_subscriptions_org_id'), table_name='report_subscriptions')
    op.drop_table('report_subscriptions')
    op.drop_index(op.f('ix_cluster_curves_org_id'), table_name='cluster_curves')
    op.drop_index('ix_cluster_curves_cluster_computed', table_name='cluster_curves')
    op.drop_table('cluster_curves')
    op.drop_index(op.f('ix_user_sessions_user_id'), table_name='user_sessions')
    op.drop_index(op.f('ix_user_sessions_org_id'), table_name='user_sessions')
    op.drop_table('user_sessions')
    op.drop_index(op.f('ix_memberships_user_id'), table_name='memberships')
    op.drop_index(op.f('ix_memberships_org_id'), table_name='memberships')
    op.drop_table('memberships')
    op.drop_index(op.f('ix_clusters_org_id'), table_name='clusters')
    op.drop_table('clusters')
    op.drop_index('ix_audit_log_org_at', table_name='audit_log')
    op.drop_table('audit_log')
    op.drop_index(op.f('ix_api_tokens_org_id'), table_name='api_tokens')
    op.drop_table('api_tokens')
    op.drop_index(op.f('ix_agent_keys_org_id'), table_name='agent_keys')
    op.drop_table('agent_keys')
    op.drop_table('users')
    op.drop_table('organizations')
    op.drop_index('ix_login_attempts_ip_at', table_name='login_attempts')
    op.drop_index('ix_login_attempts_email_at', table_name='login_attempts')
    op.drop_table('login_attempts')

