"""curve and snapshot tables partitioned by day (declarative RANGE partitioning), existing rows moved

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 07:45:00

snapshots, snapshot_classes, server_curves and accuracy_records are partitioned on window_end,
cluster_curves on computed_at; one partition per UTC day in the `partitions` schema
(hitcurve.core.partitions). Each table is renamed aside, recreated partitioned with the same
columns, its rows copied in, the old table dropped, then keys and indexes are built once over the
loaded partitions. Keys now carry the partition column and org_id (a Citus distribution by
tenant needs no further change to these tables, docs/scaling.md). snapshot_classes loses its
surrogate id (the key is snapshot, class, window_end, org) and gains its snapshot's window_end.
The foreign keys from the curve tables to snapshots go: PostgreSQL would need the partition
column in them, and the retention job removes a snapshot's rows from every table together.

Downgrade moves the rows back into plain tables (it fails if an id was reused in two windows,
which the partitioned key allows only beyond the upload path's duplicate check).
"""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from alembic import op
from sqlalchemy import text

from hitcurve.core import partitions

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The tables and their partition column, as of this revision (not the live list in
# hitcurve.core.partitions, which later revisions may extend).
TABLES = {
    "snapshots": "window_end",
    "snapshot_classes": "window_end",
    "server_curves": "window_end",
    "accuracy_records": "window_end",
    "cluster_curves": "computed_at",
}
SEQUENCES = ("server_curves", "accuracy_records", "cluster_curves")  # bigint ids kept
LOOKBACK_DAYS = 8  # uploads may be up to 7 days old (schemas.agent MAX_PAST)
AHEAD_DAYS = 7

_FKS_TO_SNAPSHOTS = {
    "snapshot_classes": ["fk_snapshot_classes_snapshot_id_snapshots"],
    "server_curves": ["fk_server_curves_snapshot_id_snapshots"],
    "accuracy_records": [
        "fk_accuracy_records_snapshot_id_snapshots",
        "fk_accuracy_records_predicted_from_snapshot_id_snapshots",
    ],
}

_CLASS_COLUMNS = (
    "org_id, snapshot_id, class_id, chunk_size, pages, items, evictions, requests, current_items,"
    " sizes_items, hit_ratios, cost_count, cost_mean_us, cost_p50_us, cost_p90_us, cost_p99_us,"
    " ttl_sizes_items, ttl_hit_ratios"
)

# Foreign keys to the non-partitioned tables, the same both ways.
_OUTER_FKS = {
    "snapshots": [
        ("fk_snapshots_agent_key_id_agent_keys", "agent_key_id", "agent_keys", "SET NULL"),
        ("fk_snapshots_org_id_organizations", "org_id", "organizations", "CASCADE"),
        ("fk_snapshots_server_id_servers", "server_id", "servers", "CASCADE"),
    ],
    "snapshot_classes": [("fk_snapshot_classes_org_id_organizations", "org_id", "organizations", "CASCADE")],
    "server_curves": [
        ("fk_server_curves_org_id_organizations", "org_id", "organizations", "CASCADE"),
        ("fk_server_curves_server_id_servers", "server_id", "servers", "CASCADE"),
    ],
    "accuracy_records": [
        ("fk_accuracy_records_org_id_organizations", "org_id", "organizations", "CASCADE"),
        ("fk_accuracy_records_server_id_servers", "server_id", "servers", "CASCADE"),
    ],
    "cluster_curves": [
        ("fk_cluster_curves_cluster_id_clusters", "cluster_id", "clusters", "CASCADE"),
        ("fk_cluster_curves_org_id_organizations", "org_id", "organizations", "CASCADE"),
    ],
}

_PENDING = "WHERE ((status)::text = ANY ((ARRAY['pending'::character varying, 'failed'::character varying])::text[]))"

# Indexes both ways (the org_id ones serve the organization's ON DELETE CASCADE).
_INDEXES = [
    "CREATE INDEX ix_snapshots_org_id ON snapshots (org_id)",
    f"CREATE INDEX ix_snapshots_pending ON snapshots (status, received_at) {_PENDING}",
    "CREATE INDEX ix_snapshots_processed_at ON snapshots (processed_at) WHERE (processed_at IS NOT NULL)",
    "CREATE INDEX ix_snapshots_server_window ON snapshots (server_id, window_end)",
    "CREATE INDEX ix_snapshot_classes_org_id ON snapshot_classes (org_id)",
    "CREATE INDEX ix_server_curves_org_id ON server_curves (org_id)",
    "CREATE INDEX ix_server_curves_server_window ON server_curves (server_id, window_end)",
    "CREATE INDEX ix_accuracy_records_org_id ON accuracy_records (org_id)",
    "CREATE INDEX ix_accuracy_records_server_window ON accuracy_records (server_id, window_end)",
    "CREATE INDEX ix_cluster_curves_cluster_computed ON cluster_curves (cluster_id, computed_at)",
    "CREATE INDEX ix_cluster_curves_org_id ON cluster_curves (org_id)",
]


def _outer_fks() -> None:
    for table, fks in _OUTER_FKS.items():
        for name, col, ref, action in fks:
            op.execute(
                f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({col}) REFERENCES {ref}(id) ON DELETE {action}"
            )


def upgrade() -> None:
    conn = op.get_bind()
    for table, fks in _FKS_TO_SNAPSHOTS.items():
        for fk in fks:
            op.execute(f"ALTER TABLE {table} DROP CONSTRAINT {fk}")
    for table, column in TABLES.items():
        op.execute(f"ALTER TABLE {table} RENAME TO {table}_unpartitioned")
        if table in SEQUENCES:
            op.execute(f"ALTER SEQUENCE {table}_id_seq OWNED BY NONE")
        extra = ", window_end timestamp with time zone NOT NULL" if table == "snapshot_classes" else ""
        op.execute(
            f"CREATE TABLE {table} (LIKE {table}_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS"
            f" INCLUDING STORAGE{extra}) PARTITION BY RANGE ({column})"
        )
    op.execute("ALTER TABLE snapshot_classes DROP COLUMN id")

    # A partition for every day that holds rows, and the days uploads can still reach.
    today = datetime.now(UTC).date()
    days = set(partitions.days(today - timedelta(days=LOOKBACK_DAYS), today + timedelta(days=AHEAD_DAYS)))
    for table, column in TABLES.items():
        if table == "snapshot_classes":
            continue  # its rows take their snapshot's day
        days |= set(
            conn.execute(
                text(f"SELECT DISTINCT ({column} AT TIME ZONE 'UTC')::date FROM {table}_unpartitioned")
            ).scalars()
        )
    partitions.ensure(conn, days, TABLES)

    for table in TABLES:
        if table == "snapshot_classes":
            cols = ", ".join(f"c.{c.strip()}" for c in _CLASS_COLUMNS.split(","))
            op.execute(
                f"INSERT INTO snapshot_classes ({_CLASS_COLUMNS}, window_end) SELECT {cols}, s.window_end"
                " FROM snapshot_classes_unpartitioned c JOIN snapshots_unpartitioned s ON s.id = c.snapshot_id"
            )
        else:
            op.execute(f"INSERT INTO {table} SELECT * FROM {table}_unpartitioned")
    for table in TABLES:
        op.execute(f"DROP TABLE {table}_unpartitioned")

    op.execute("ALTER TABLE snapshots ADD CONSTRAINT pk_snapshots PRIMARY KEY (id, window_end, org_id)")
    op.execute(
        "ALTER TABLE snapshot_classes ADD CONSTRAINT pk_snapshot_classes"
        " PRIMARY KEY (snapshot_id, class_id, window_end, org_id)"
    )
    for table in ("server_curves", "accuracy_records"):
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY (id, window_end, org_id)")
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT uq_{table}_snapshot_id UNIQUE (snapshot_id, window_end, org_id)"
        )
    op.execute(
        "ALTER TABLE cluster_curves ADD CONSTRAINT pk_cluster_curves PRIMARY KEY (id, computed_at, org_id)"
    )
    for table in SEQUENCES:
        op.execute(f"ALTER SEQUENCE {table}_id_seq OWNED BY {table}.id")
    for ddl in _INDEXES:
        op.execute(ddl)
    _outer_fks()


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} RENAME TO {table}_partitioned")
        if table in SEQUENCES:
            op.execute(f"ALTER SEQUENCE {table}_id_seq OWNED BY NONE")
        op.execute(
            f"CREATE TABLE {table} (LIKE {table}_partitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS"
            " INCLUDING STORAGE)"
        )
    op.execute("ALTER TABLE snapshot_classes DROP COLUMN window_end")
    op.execute("CREATE SEQUENCE snapshot_classes_id_seq")
    op.execute(
        "ALTER TABLE snapshot_classes ADD COLUMN id bigint NOT NULL DEFAULT nextval('snapshot_classes_id_seq')"
    )
    for table in TABLES:
        if table == "snapshot_classes":
            op.execute(
                f"INSERT INTO snapshot_classes ({_CLASS_COLUMNS}) SELECT {_CLASS_COLUMNS}"
                " FROM snapshot_classes_partitioned ORDER BY window_end, snapshot_id, class_id"
            )
        else:
            op.execute(f"INSERT INTO {table} SELECT * FROM {table}_partitioned")
    for table in TABLES:
        op.execute(f"DROP TABLE {table}_partitioned")
    op.execute(f"DROP SCHEMA IF EXISTS {partitions.SCHEMA} CASCADE")
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY (id)")
    for table in (*SEQUENCES, "snapshot_classes"):
        op.execute(f"ALTER SEQUENCE {table}_id_seq OWNED BY {table}.id")
    op.execute(
        "ALTER TABLE accuracy_records ADD CONSTRAINT uq_accuracy_records_snapshot_id UNIQUE (snapshot_id)"
    )
    op.execute("ALTER TABLE server_curves ADD CONSTRAINT uq_server_curves_snapshot_id UNIQUE (snapshot_id)")
    op.execute(
        "ALTER TABLE snapshot_classes ADD CONSTRAINT uq_snapshot_classes_snapshot_class UNIQUE (snapshot_id, class_id)"
    )
    for ddl in _INDEXES:
        op.execute(ddl)
    op.execute("CREATE INDEX ix_snapshot_classes_snapshot_id ON snapshot_classes (snapshot_id)")
    _outer_fks()
    for table, name, col, action in (
        ("snapshot_classes", "fk_snapshot_classes_snapshot_id_snapshots", "snapshot_id", "CASCADE"),
        ("server_curves", "fk_server_curves_snapshot_id_snapshots", "snapshot_id", "CASCADE"),
        ("accuracy_records", "fk_accuracy_records_snapshot_id_snapshots", "snapshot_id", "CASCADE"),
        (
            "accuracy_records",
            "fk_accuracy_records_predicted_from_snapshot_id_snapshots",
            "predicted_from_snapshot_id",
            "SET NULL",
        ),
    ):
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({col}) REFERENCES snapshots(id) ON DELETE {action}"
        )
