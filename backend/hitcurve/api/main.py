"""The /api/v1 router: every route module is included here; and the OpenAPI additions."""

from typing import Any

from fastapi import APIRouter

from hitcurve.api.routes import (
    account,
    agent,
    agent_install,
    auth,
    breakdown,
    health,
    inventory,
    keys,
    metrics,
    notifications,
    ops,
    reports,
    sizing,
)
from hitcurve.schemas import agent as proto

api_router = APIRouter(prefix="/api/v1")
# The upload routes first: routes are matched in order and uploads are the busiest path.
api_router.include_router(agent.router)
api_router.include_router(health.router)
api_router.include_router(auth.router)
api_router.include_router(account.router)
api_router.include_router(keys.router)
api_router.include_router(agent_install.router)
api_router.include_router(inventory.router)
api_router.include_router(breakdown.router)
api_router.include_router(sizing.router)
api_router.include_router(ops.router)
api_router.include_router(reports.router)
api_router.include_router(notifications.router)
api_router.include_router(metrics.router)
# Served outside /api/v1 (Prometheus scrapes /metrics).
root_router = metrics.root_router


def extend_openapi(app: Any) -> None:
    """Publish the agent protocol models in components/schemas (the upload bodies refer to them)."""
    base = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = base()
        comps = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in (proto.Snapshot, proto.TraceChunk):
            js = model.model_json_schema(ref_template="#/components/schemas/{model}")
            for name, d in js.pop("$defs", {}).items():
                comps.setdefault(name, d)
            comps[model.__name__] = js
        return schema

    app.openapi = openapi
