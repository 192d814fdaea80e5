"""The /api/v1 router: every route module is included here."""

from fastapi import APIRouter

from hitcurve.api.routes import account, agent, auth, health, inventory, keys, metrics, ops, sizing

api_router = APIRouter(prefix="/api/v1")
# The upload routes first: routes are matched in order and uploads are the busiest path.
api_router.include_router(agent.router)
api_router.include_router(health.router)
api_router.include_router(auth.router)
api_router.include_router(account.router)
api_router.include_router(keys.router)
api_router.include_router(inventory.router)
api_router.include_router(sizing.router)
api_router.include_router(ops.router)
api_router.include_router(metrics.router)
