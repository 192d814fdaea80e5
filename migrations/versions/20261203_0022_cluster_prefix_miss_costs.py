"""clusters.prefix_miss_costs: misses priced per prefix

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-03 14:40:00

{prefix: money per million misses} for the prefixes whose misses cost apart from the cluster's
miss cost (hitcurve.cost.prefixes). Null: every miss at the cluster's miss cost, as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("clusters", sa.Column("prefix_miss_costs", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("clusters", "prefix_miss_costs")
