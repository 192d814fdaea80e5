"""The API docs work without internet: Swagger UI and ReDoc pages reference only assets the
backend serves itself (from the pinned fastapi-offline package), and the usual guesses
(/docs, /redoc, /openapi.json) redirect to them instead of answering the dashboard's HTML."""

from __future__ import annotations

import re
from typing import Any

import pytest


def _refs(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html) + re.findall(
        r"""url\s*:\s*['"]([^'"]+)['"]""", html
    )


@pytest.mark.parametrize(
    ("page", "asset_kinds"), [("/api/v1/docs", {"js", "css"}), ("/api/v1/redoc", {"js"})]
)
def test_docs_page_uses_only_local_assets(anon: Any, page: str, asset_kinds: set[str]) -> None:
    r = anon.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    assert "http://" not in html and "https://" not in html, re.findall(r"https?://[^\s\"']+", html)
    assert "/api/v1/openapi.json" in html
    seen = set()
    for ref in _refs(html):
        assert ref.startswith("/"), f"{page} references {ref}"
        got = anon.get(ref)
        assert got.status_code == 200 and len(got.content) > 100, (ref, got.status_code)
        ext = ref.rsplit(".", 1)[-1]
        seen.add(ext)
        if ext == "js":
            assert "javascript" in got.headers["content-type"]
    assert asset_kinds <= seen, seen


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/docs", "/api/v1/docs"),
        ("/redoc", "/api/v1/redoc"),
        ("/openapi.json", "/api/v1/openapi.json"),
        ("/api/docs", "/api/v1/docs"),
    ],
)
def test_usual_paths_redirect_to_the_api_docs(anon: Any, path: str, target: str) -> None:
    r = anon.get(path, follow_redirects=False)
    assert r.status_code == 308 and r.headers["location"] == target
    final = anon.get(path)
    assert final.status_code == 200
    if target.endswith(".json"):
        spec = final.json()
        assert (
            spec["info"]["title"] == "Hitcurve API"
            and "/api/v1/sizing/servers/{server_id}/memory" in spec["paths"]
        )
    else:
        assert "Hitcurve API - " in final.text and "<title>Hitcurve</title>" not in final.text


def test_metrics_is_documented_in_the_schema(anon: Any) -> None:
    spec = anon.get("/api/v1/openapi.json").json()
    assert "/api/v1/metrics" in spec["paths"]
