"""The dashboard's API types (frontend/src/api/schema.ts) are what openapi-typescript writes from
the OpenAPI document the API serves now (scripts/api-types.sh): a route or schema changed without
the types regenerated fails here, before the dashboard reads a field the API no longer sends."""

import difflib
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "frontend" / "src" / "api" / "schema.ts"


def test_the_dashboard_api_types_are_generated_from_the_openapi_document(tmp_path: Path) -> None:
    fresh = tmp_path / "schema.ts"
    subprocess.run(["bash", str(ROOT / "scripts" / "api-types.sh"), str(fresh)], check=True, timeout=300)
    want, have = fresh.read_text(), COMMITTED.read_text()
    diff = "".join(
        difflib.unified_diff(have.splitlines(True), want.splitlines(True), "committed", "generated", n=2)
    )
    assert want == have, f"run scripts/api-types.sh and commit frontend/src/api/schema.ts:\n{diff[:4000]}"
