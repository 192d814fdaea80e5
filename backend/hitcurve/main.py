"""ASGI application: the API under /api/v1, its docs (served from local assets), /metrics and
the built dashboard at /."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, HTTPException
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from hitcurve import __version__
from hitcurve.api.bounds import RequestBounds
from hitcurve.api.errors import install_handlers
from hitcurve.api.main import api_router, extend_openapi
from hitcurve.api.main import root_router as metrics_root_router
from hitcurve.core import accepting
from hitcurve.core.config import get_settings
from hitcurve.ingest.uploads import start_decoders_in_background


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # The upload decoders start beside the server, in a thread: neither the start-up nor the
    # event loop waits for them, and no upload pays for starting them (hitcurve.ingest.uploads).
    start_decoders_in_background(get_settings().upload_decoders)
    await _build_routes(app)
    # "the backend accepts uploads", for the agent-silent rule (hitcurve.core.accepting)
    beating = asyncio.create_task(accepting.beat_forever())
    try:
        yield
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating


async def _build_routes(app: FastAPI) -> None:
    """FastAPI builds an included router's route state (dependants of every route) at the first
    request that reaches it, on the event loop: py-spy under bench/stall found 0.7 s of it at the
    first upload, every other request of the process waiting. Route matching walks every router
    for a path no route answers, so one such request before serving builds them all."""
    path = "/api/v1/-/build-routes"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
        "state": {},
    }

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: object) -> None:
        return None

    try:
        await app(scope, receive, send)
    except Exception:  # only a head start: the first real request builds them otherwise
        logging.getLogger("hitcurve").warning("building the routes at start-up failed", exc_info=True)


def create_app() -> FastAPI:
    app = FastAPI(
        lifespan=lifespan,
        title="Hitcurve API",
        version=__version__,
        description="Hit-rate curves and memory sizing for memcached fleets.",
        openapi_url=OPENAPI_URL,
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    install_handlers(app)
    # Client address and scheme from X-Forwarded-For/-Proto only when the TCP peer is a configured
    # proxy (none by default). Start the server with `python -m hitcurve.serve`, which turns
    # uvicorn's own handling (trusting 127.0.0.1) off.
    proxies = [p.strip() for p in get_settings().trusted_proxies.split(",") if p.strip()]
    app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=proxies)
    # Added last, so it runs first: path, body size and body timeout bounds of every route, and the
    # framing and content policies of every answer (hitcurve.api.bounds).
    app.add_middleware(RequestBounds)
    app.include_router(api_router)
    app.include_router(metrics_root_router)
    extend_openapi(app)
    _mount_docs(app)
    _mount_frontend(app, get_settings().frontend_dist)
    return app


OPENAPI_URL = "/api/v1/openapi.json"
DOCS_URL = "/api/v1/docs"
REDOC_URL = "/api/v1/redoc"
# Swagger UI and ReDoc from the pinned fastapi-offline package (requirements.lock): the docs
# work without internet access, and nothing fetched from a CDN is committed.
DOCS_ASSETS_URL = "/api/v1/docs-assets"
DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"


def _mount_docs(app: FastAPI) -> None:
    app.mount(DOCS_ASSETS_URL, StaticFiles(directory=DOCS_ASSETS), name="docs-assets")

    @app.get(DOCS_URL, include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=OPENAPI_URL,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{DOCS_ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS_URL}/favicon.png",
        )

    @app.get(REDOC_URL, include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=OPENAPI_URL,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{DOCS_ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{DOCS_ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )

    # The usual guesses lead to the API's docs, not to the dashboard's HTML.
    for path, target in (
        ("/docs", DOCS_URL),
        ("/redoc", REDOC_URL),
        ("/openapi.json", OPENAPI_URL),
        ("/api/docs", DOCS_URL),
        ("/api/openapi.json", OPENAPI_URL),
    ):
        app.add_api_route(path, _redirect(target), methods=["GET"], include_in_schema=False)


def _redirect(target: str) -> Callable[[], RedirectResponse]:
    def go() -> RedirectResponse:
        return RedirectResponse(target, status_code=308)

    return go


def _mount_frontend(app: FastAPI, dist: Path) -> None:
    """Serve the built single-page app; unknown non-API paths get index.html (client routing)."""
    index = dist / "index.html"
    if not index.is_file():
        return
    if (dist / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=dist / "assets"), name="assets")

    @app.get("/{path:path}", include_in_schema=False)
    def spa(path: str) -> FileResponse:
        if path.startswith("api/"):
            raise HTTPException(status_code=404, detail=f"no API route /{path}")
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and dist.resolve() in candidate.parents:
            return FileResponse(candidate)
        return FileResponse(index)


app = create_app()
