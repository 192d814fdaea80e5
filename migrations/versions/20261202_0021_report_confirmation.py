"""report_subscriptions.confirmed_at, confirmation_sent_at: a recipient confirms by mail

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02 14:00:00

A weekly report goes only to an address that followed the signed link of its confirmation mail
(confirmed_at), or that is the subscribing user's own (proved when the account was made).
confirmation_sent_at: when the last confirmation mail went out (a resend waits a while).
Subscriptions stored before this revision: those of the subscribing user's own address count as
confirmed since they were made; any other address is pending until its recipient confirms.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("report_subscriptions", sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "report_subscriptions", sa.Column("confirmation_sent_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.execute(
        "UPDATE report_subscriptions s SET confirmed_at = s.created_at FROM users u "
        "WHERE u.id = s.user_id AND lower(u.email) = lower(s.email)"
    )


def downgrade() -> None:
    op.drop_column("report_subscriptions", "confirmation_sent_at")
    op.drop_column("report_subscriptions", "confirmed_at")
