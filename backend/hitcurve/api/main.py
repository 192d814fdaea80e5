"""The /api/v1 router: every route module is included here."""

from fastapi import APIRouter

from hitcurve.api.routes import health

api_router = APIRouter(prefix="/api/v1")
api_router.include_router(health.router)
