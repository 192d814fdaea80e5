"""snapshots: payload as gzip bytes instead of JSONB

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 15:45:00

The upload is kept as the agent sent it, gzip-compressed, in `payload_gzip` (NULL once retention
dropped it). PostgreSQL no longer parses and re-compresses 50 KB of JSON per upload, which was
half of its CPU per snapshot. Existing payloads are converted in batches, both ways.
"""
import gzip
import json
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500


def _convert(select_sql: str, update_sql: str, convert: Callable[[Any], Any]) -> None:
    """Rewrite rows in batches of BATCH, in id order: select_sql yields (id, value), update_sql
    takes :id and the converted :v."""
    conn = op.get_bind()
    last = None
    while True:
        after = " AND id > :last" if last is not None else ""
        rows = conn.execute(
            sa.text(f"{select_sql}{after} ORDER BY id LIMIT :n"), {"n": BATCH, "last": last}
        ).all()
        if not rows:
            return
        conn.execute(sa.text(update_sql), [{"id": r[0], "v": convert(r[1])} for r in rows])
        last = rows[-1][0]


def upgrade() -> None:
    op.add_column('snapshots', sa.Column('payload_gzip', sa.LargeBinary(), nullable=True))
    # Already compressed: keep PostgreSQL from trying again (EXTERNAL = out of line, uncompressed).
    op.execute('ALTER TABLE snapshots ALTER COLUMN payload_gzip SET STORAGE EXTERNAL')
    _convert(
        "SELECT id, payload::text FROM snapshots WHERE payload <> '{}'::jsonb",
        "UPDATE snapshots SET payload_gzip = :v WHERE id = :id",
        lambda text: gzip.compress(text.encode(), compresslevel=6, mtime=0),
    )
    op.drop_column('snapshots', 'payload')


def downgrade() -> None:
    op.add_column(
        'snapshots',
        sa.Column(
            'payload', postgresql.JSONB(astext_type=sa.Text()), nullable=False, server_default=sa.text("'{}'::jsonb")
        ),
    )
    op.execute("""
        DO $$ BEGIN
            ALTER TABLE snapshots ALTER COLUMN payload SET COMPRESSION lz4;
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;  -- built without lz4
        END $$
    """)
    _convert(
        "SELECT id, payload_gzip FROM snapshots WHERE payload_gzip IS NOT NULL",
        "UPDATE snapshots SET payload = CAST(:v AS jsonb) WHERE id = :id",
        lambda data: json.dumps(json.loads(gzip.decompress(data))),
    )
    op.alter_column('snapshots', 'payload', server_default=None)
    op.drop_column('snapshots', 'payload_gzip')
