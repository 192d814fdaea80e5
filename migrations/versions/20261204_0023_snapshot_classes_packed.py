"""snapshots.classes: a window's slab classes packed in one column, snapshot_classes gone

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-04 19:30:00

One row per slab class with two float8[100] curves wrote ~55 KB of WAL per upload (1.8 KB rows
under the toast threshold, ~57 index entries). The classes are now one lossless packed value per
snapshot (hitcurve.ingest.classpack, ~5 KB for 28 classes) with the two cost sums the cost view
reads (cost_count, cost_us_total). Stored rows are packed snapshot by snapshot, day partition by
day partition, then the table is dropped. A class keeps its TTL-aware curve when both its arrays
are stored (as ingest always stored them). Downgrade recreates the partitioned table (as of 0022)
and unpacks every stored value back into rows.
"""

from collections.abc import Sequence
from itertools import groupby

import numpy as np
import sqlalchemy as sa
from alembic import op
from sqlalchemy import text

from hitcurve.core import partitions
from hitcurve.ingest import classpack

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SCALARS = (
    "class_id, chunk_size, pages, items, evictions, requests, current_items, cost_count, cost_mean_us,"
    " cost_p50_us, cost_p90_us, cost_p99_us, ghost_reach_items, ghost_filters"
)
_CURVES = "sizes_items, hit_ratios, ttl_sizes_items, ttl_hit_ratios"
BATCH = 500  # snapshots packed per statement


def _pack_rows(rows: list[sa.Row]) -> tuple[bytes, int | None, float | None]:
    """The packed value and cost sums of one snapshot's class rows (class order)."""
    cols: dict[str, list] = {k.strip(): [getattr(r, k.strip()) for r in rows] for k in _SCALARS.split(",")}
    cols["has_ttl"] = [r.ttl_sizes_items is not None and r.ttl_hit_ratios is not None for r in rows]
    points = len(rows[0].sizes_items)
    if any(len(r.sizes_items) != points or len(r.hit_ratios) != points for r in rows):
        # the store statement slices every class to the snapshot's curve_points
        raise RuntimeError(f"snapshot {rows[0].snapshot_id}: classes with different point counts")
    xs = np.concatenate([np.asarray(r.sizes_items, float) for r in rows])
    ys = np.concatenate([np.asarray(r.hit_ratios, float) for r in rows])
    ttl = [r for r, h in zip(rows, cols["has_ttl"], strict=True) if h]
    tx = np.concatenate([np.asarray(r.ttl_sizes_items, float) for r in ttl]) if ttl else None
    ty = np.concatenate([np.asarray(r.ttl_hit_ratios, float) for r in ttl]) if ttl else None
    packed = classpack.pack(cols, xs, ys, points, tx, ty)
    n, total = classpack.cost_sums(cols["cost_count"], cols["cost_mean_us"])
    return packed, n, total


def upgrade() -> None:
    op.add_column("snapshots", sa.Column("classes", sa.LargeBinary(), nullable=True))
    op.add_column("snapshots", sa.Column("cost_count", sa.BigInteger(), nullable=True))
    op.add_column("snapshots", sa.Column("cost_us_total", sa.Float(), nullable=True))
    # Already compressed: out of line, never compressed again.
    op.execute("ALTER TABLE snapshots ALTER COLUMN classes SET STORAGE EXTERNAL")
    conn = op.get_bind()
    for _day, part in sorted(partitions.existing(conn, "snapshot_classes").items()):
        rows = conn.execute(
            text(
                f"SELECT org_id, snapshot_id, window_end, {_SCALARS}, {_CURVES}"  # noqa: S608 - a partition name, ours
                f" FROM {partitions.SCHEMA}.{part} ORDER BY snapshot_id, window_end, org_id, class_id"
            )
        ).all()
        updates = []
        for key, group in groupby(rows, key=lambda r: (r.org_id, r.snapshot_id, r.window_end)):
            packed, n, total = _pack_rows(list(group))
            updates.append({"o": key[0], "i": key[1], "w": key[2], "c": packed, "n": n, "t": total})
        for at in range(0, len(updates), BATCH):
            conn.execute(
                text(
                    "UPDATE snapshots SET classes = :c, cost_count = :n, cost_us_total = :t"
                    " WHERE id = :i AND window_end = :w AND org_id = :o"
                ),
                updates[at : at + BATCH],
            )
    op.execute("DROP TABLE snapshot_classes")


def downgrade() -> None:
    op.execute(
        "CREATE TABLE snapshot_classes (org_id uuid NOT NULL, snapshot_id uuid NOT NULL,"
        " class_id smallint NOT NULL, chunk_size integer NOT NULL, pages integer NOT NULL,"
        " items bigint NOT NULL, evictions bigint NOT NULL, requests bigint NOT NULL,"
        " current_items bigint NOT NULL, sizes_items double precision[] NOT NULL,"
        " hit_ratios double precision[] NOT NULL, cost_count bigint, cost_mean_us double precision,"
        " cost_p50_us double precision, cost_p90_us double precision, cost_p99_us double precision,"
        " ttl_sizes_items double precision[], ttl_hit_ratios double precision[],"
        " window_end timestamp with time zone NOT NULL, ghost_reach_items bigint, ghost_filters smallint"
        ") PARTITION BY RANGE (window_end)"
    )
    op.execute(
        "ALTER TABLE snapshot_classes ADD CONSTRAINT pk_snapshot_classes"
        " PRIMARY KEY (snapshot_id, class_id, window_end, org_id)"
    )
    op.execute("CREATE INDEX ix_snapshot_classes_org_id ON snapshot_classes (org_id)")
    op.execute(
        "ALTER TABLE snapshot_classes ADD CONSTRAINT fk_snapshot_classes_org_id_organizations"
        " FOREIGN KEY (org_id) REFERENCES organizations(id) ON DELETE CASCADE"
    )
    conn = op.get_bind()
    partitions.ensure(conn, partitions.existing(conn, "snapshots"), {"snapshot_classes": "window_end"})
    stored = conn.execute(
        text("SELECT org_id, id, window_end, classes FROM snapshots WHERE classes IS NOT NULL")
    ).all()
    names = ["org_id", "snapshot_id", "window_end", *classpack.StoredClass.__dataclass_fields__]
    insert = text(
        f"INSERT INTO snapshot_classes ({', '.join(names)}) VALUES ({', '.join(':' + k for k in names)})"  # noqa: S608 - our columns
    )
    for s in stored:
        rows = [
            {"org_id": s.org_id, "snapshot_id": s.id, "window_end": s.window_end, **vars(c)}
            for c in classpack.unpack(s.classes)
        ]
        if rows:
            conn.execute(insert, rows)
    op.drop_column("snapshots", "cost_us_total")
    op.drop_column("snapshots", "cost_count")
    op.drop_column("snapshots", "classes")
