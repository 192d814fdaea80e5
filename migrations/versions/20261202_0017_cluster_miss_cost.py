"""clusters: what a miss costs (entered, or measured from the agents' refill time at a CPU price)

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 06:30:00

The cost-optimal size (hitcurve.cost) prices misses per cluster: miss_cost_source 'entered' reads
miss_cost_per_million (money per million misses); 'measured' prices the agents' mean miss-to-set
time (snapshot_classes.cost_mean_us) as CPU time at cpu_price_per_hour. Existing clusters get
'entered' with no figure: no optimum until one is given.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("clusters", sa.Column("miss_cost_per_million", sa.Float(), nullable=True))
    op.add_column("clusters", sa.Column("cpu_price_per_hour", sa.Float(), nullable=True))
    op.add_column(
        "clusters",
        sa.Column("miss_cost_source", sa.String(length=16), nullable=False, server_default="entered"),
    )
    op.create_check_constraint(
        op.f("ck_clusters_miss_cost"),
        "clusters",
        "miss_cost_per_million IS NULL OR miss_cost_per_million >= 0",
    )
    op.create_check_constraint(
        op.f("ck_clusters_cpu_price"), "clusters", "cpu_price_per_hour IS NULL OR cpu_price_per_hour >= 0"
    )
    op.create_check_constraint(
        op.f("ck_clusters_miss_cost_source"), "clusters", "miss_cost_source IN ('entered', 'measured')"
    )


def downgrade() -> None:
    for name in ("ck_clusters_miss_cost_source", "ck_clusters_cpu_price", "ck_clusters_miss_cost"):
        op.drop_constraint(op.f(name), "clusters", type_="check")
    for col in ("miss_cost_source", "cpu_price_per_hour", "miss_cost_per_million"):
        op.drop_column("clusters", col)
