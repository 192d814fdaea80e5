"""ASGI application: the API under /api/v1 and the built dashboard at /."""

from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from hitcurve import __version__
from hitcurve.api.main import api_router
from hitcurve.api.routes.agent import extend_openapi
from hitcurve.core.config import get_settings
from hitcurve.core.errors import install_handlers


def create_app() -> FastAPI:
    app = FastAPI(
        title="Hitcurve API",
        version=__version__,
        description="Hit-rate curves and memory sizing for memcached fleets.",
        openapi_url="/api/v1/openapi.json",
        docs_url="/api/v1/docs",
        redoc_url=None,
    )
    install_handlers(app)
    app.include_router(api_router)
    extend_openapi(app)
    _mount_frontend(app, get_settings().frontend_dist)
    return app


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
