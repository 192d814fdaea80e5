"""install_settings: the install's own settings (private webhook targets), changed without a restart

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 06:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "install_settings",
        sa.Column("id", sa.SmallInteger(), nullable=False),
        sa.Column("allow_private_webhooks", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("changed_by", sa.String(length=320), nullable=True),
        sa.CheckConstraint("id = 1", name=op.f("ck_install_settings_one_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_install_settings")),
    )


def downgrade() -> None:
    op.drop_table("install_settings")
