"""GET /api/v1/metrics (and /metrics): the organization's metrics (hitcurve.views.metrics) in
Prometheus' text exposition format, for a scrape with an API token (scope read is enough)."""

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from hitcurve.api.deps import DbDep, ReaderDep
from hitcurve.views.metrics import OrgCollector

router = APIRouter(tags=["metrics"])


# The classic text format 0.0.4: every Prometheus version parses it (the names are all legacy-valid).
def _exposition(me: ReaderDep, db: DbDep) -> Response:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(OrgCollector(db, me.org_id))
    return Response(content=generate_latest(registry), media_type=CONTENT_TYPE_PLAIN_0_0_4)


@router.get(
    "/metrics",
    summary="Prometheus metrics of the organization (text exposition format)",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_PLAIN_0_0_4: {}}, "description": "exposition text"}},
)
def metrics(me: ReaderDep, db: DbDep) -> Response:
    return _exposition(me, db)


# The conventional path, outside /api/v1 (registered on the app in hitcurve/main.py).
root_router = APIRouter()
root_router.add_api_route("/metrics", metrics, methods=["GET"], include_in_schema=False)
