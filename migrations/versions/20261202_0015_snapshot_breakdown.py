"""snapshots.breakdown: what the breakdown pages read of an upload, extracted once at ingest

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 01:00:00

The breakdown pages decoded up to 20 stored uploads (payload_gzip) per request; now the API
writes the breakdown fields of each validated upload into this column at ingest
(hitcurve.ingest.snapshot_rows.breakdown_json) and the pages read only it. The backfill gives rows
stored before this revision the same column from their stored payload, in batches: a payload that
inflates beyond BACKFILL_CAP or does not parse is left without a breakdown (its window then shows
none) rather than stalling the upgrade. Its field list is this revision's, fixed here.
"""
import json
import zlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 100
BACKFILL_CAP = 16 << 20  # inflated bytes of one stored payload; a valid snapshot is far below
TOP = ("prefix_rule", "prefixes", "prefix_other", "ttl_whatif_ttls_s", "ttl_points", "ttl", "hot_keys",
       "hot_keys_by_bytes", "hot_keys_hashed")
CLASS = ("id", "chunk_size", "left", "page_move_evictions")
SELECT = "SELECT id, window_end, payload_gzip FROM snapshots WHERE payload_gzip IS NOT NULL"
UPDATE = "UPDATE snapshots SET breakdown = CAST(:v AS jsonb) WHERE id = :id AND window_end = :we"


def _inflate(data: bytes) -> bytes | None:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, BACKFILL_CAP + 1)
    except zlib.error:
        return None
    return None if len(out) > BACKFILL_CAP or not d.eof else out


def extract(payload_gzip: bytes) -> str | None:
    """The breakdown of one stored upload as JSON text, or None (none sent, or unreadable)."""
    raw = _inflate(payload_gzip)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict) or (doc.get("prefixes") is None and doc.get("ttl_points") is None):
        return None
    out: dict[str, Any] = {k: doc.get(k) for k in TOP}
    out["classes"] = [{k: c[k] for k in CLASS if k in c} for c in doc.get("classes") or []]
    out["server"] = {"limit_maxbytes": (doc.get("server") or {}).get("limit_maxbytes")}
    m = doc.get("measured") or {}
    out["measured"] = {"hit_ratio": m.get("hit_ratio"), "bytes": m.get("bytes")}
    return json.dumps(out)


def upgrade() -> None:
    op.add_column('snapshots', sa.Column('breakdown', postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    conn = op.get_bind()
    first = sa.text(f"{SELECT} ORDER BY window_end, id LIMIT :n")
    more = sa.text(f"{SELECT} AND (window_end, id) > (:we, :id) ORDER BY window_end, id LIMIT :n")
    last: tuple[Any, Any] | None = None
    while True:
        if last is None:
            rows = conn.execute(first, {"n": BATCH}).all()
        else:
            rows = conn.execute(more, {"n": BATCH, "we": last[0], "id": last[1]}).all()
        if not rows:
            return
        found = [(r.id, r.window_end, extract(r.payload_gzip)) for r in rows]
        values = [{"id": i, "we": we, "v": v} for i, we, v in found if v is not None]
        if values:
            conn.execute(
                sa.text(UPDATE),
                values,
            )
        last = (rows[-1].window_end, rows[-1].id)


def downgrade() -> None:
    op.drop_column('snapshots', 'breakdown')
