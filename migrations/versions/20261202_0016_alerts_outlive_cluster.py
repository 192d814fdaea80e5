"""alerts.cluster_id: SET NULL when the cluster is deleted (was CASCADE)

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 06:00:00

Deleting a cluster resolves its open alerts and tells the channels
(hitcurve.crud.inventory.resolve_alerts_of_deleted_cluster); the alerts stay in the history,
named by the cluster's name kept in their details, instead of vanishing with their deliveries.
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FK = 'fk_alerts_cluster_id_clusters'


def upgrade() -> None:
    op.drop_constraint(FK, 'alerts', type_='foreignkey')
    op.create_foreign_key(FK, 'alerts', 'clusters', ['cluster_id'], ['id'], ondelete='SET NULL')


def downgrade() -> None:
    op.execute(
        "DELETE FROM alerts WHERE cluster_id IS NULL AND server_id IS NULL AND details ? 'cluster_name'"
    )
    op.drop_constraint(FK, 'alerts', type_='foreignkey')
    op.create_foreign_key(FK, 'alerts', 'clusters', ['cluster_id'], ['id'], ondelete='CASCADE')
