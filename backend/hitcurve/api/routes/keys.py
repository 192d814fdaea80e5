"""Agent keys and API tokens: created by owners, secret shown once, stored as SHA-256, revocable."""

import uuid
from datetime import UTC, datetime

from fastapi import APIRouter, Response
from sqlalchemy import select

from hitcurve.api.deps import DbDep, MemberDep, OwnerDep, forget_secret
from hitcurve.core.audit import audit
from hitcurve.core.domain import NotFound
from hitcurve.core.security import AGENT_KEY_PREFIX, API_TOKEN_PREFIX, new_secret, sha256_hex
from hitcurve.models import AgentKey, ApiToken
from hitcurve.schemas.api import AgentKeyCreated, AgentKeyIn, ApiTokenCreated, ApiTokenIn, ApiTokenOut, KeyOut

router = APIRouter(tags=["keys"])
PREFIX_LEN = 10  # "hca_" + 6 characters of the secret, enough to tell keys apart in a list


@router.get("/agent-keys", response_model=list[KeyOut], summary="Agent keys of the organization (no secrets)")
def list_agent_keys(me: MemberDep, db: DbDep) -> list[AgentKey]:
    return list(
        db.execute(
            select(AgentKey).where(AgentKey.org_id == me.org_id).order_by(AgentKey.created_at.desc())
        ).scalars()
    )


@router.post(
    "/agent-keys",
    status_code=201,
    response_model=AgentKeyCreated,
    summary="Create an agent key (owners); the secret is shown only in this answer",
)
def create_agent_key(body: AgentKeyIn, me: OwnerDep, db: DbDep) -> AgentKeyCreated:
    secret = new_secret(AGENT_KEY_PREFIX)
    row = AgentKey(
        org_id=me.org_id,
        name=body.name,
        prefix=secret[:PREFIX_LEN],
        key_hash=sha256_hex(secret),
        created_by=me.user_id,
    )
    db.add(row)
    db.flush()
    audit(
        db,
        "agent_key.created",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="agent_key",
        target_id=row.id,
    )
    db.commit()
    return AgentKeyCreated.model_validate({**KeyOut.model_validate(row).model_dump(), "key": secret})


@router.delete("/agent-keys/{key_id}", status_code=204, summary="Revoke an agent key (owners)")
def revoke_agent_key(key_id: uuid.UUID, me: OwnerDep, db: DbDep) -> Response:
    row = db.execute(
        select(AgentKey).where(AgentKey.id == key_id, AgentKey.org_id == me.org_id)
    ).scalar_one_or_none()
    if row is None:
        raise NotFound("agent key")
    if row.revoked_at is None:
        row.revoked_at = datetime.now(UTC)
        audit(
            db,
            "agent_key.revoked",
            org_id=me.org_id,
            user_id=me.user_id,
            target_type="agent_key",
            target_id=row.id,
        )
        db.commit()
        forget_secret(row.key_hash)
    return Response(status_code=204)


@router.get(
    "/api-tokens", response_model=list[ApiTokenOut], summary="API tokens of the organization (no secrets)"
)
def list_api_tokens(me: MemberDep, db: DbDep) -> list[ApiToken]:
    return list(
        db.execute(
            select(ApiToken).where(ApiToken.org_id == me.org_id).order_by(ApiToken.created_at.desc())
        ).scalars()
    )


@router.post(
    "/api-tokens",
    status_code=201,
    response_model=ApiTokenCreated,
    summary="Create an API token for an autoscaler (owners); the secret is shown only in this answer",
)
def create_api_token(body: ApiTokenIn, me: OwnerDep, db: DbDep) -> ApiTokenCreated:
    secret = new_secret(API_TOKEN_PREFIX)
    row = ApiToken(
        org_id=me.org_id,
        name=body.name,
        scope=body.scope,
        prefix=secret[:PREFIX_LEN],
        token_hash=sha256_hex(secret),
        created_by=me.user_id,
    )
    db.add(row)
    db.flush()
    audit(
        db,
        "api_token.created",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="api_token",
        target_id=row.id,
        scope=body.scope,
    )
    db.commit()
    return ApiTokenCreated.model_validate({**ApiTokenOut.model_validate(row).model_dump(), "token": secret})


@router.delete("/api-tokens/{token_id}", status_code=204, summary="Revoke an API token (owners)")
def revoke_api_token(token_id: uuid.UUID, me: OwnerDep, db: DbDep) -> Response:
    row = db.execute(
        select(ApiToken).where(ApiToken.id == token_id, ApiToken.org_id == me.org_id)
    ).scalar_one_or_none()
    if row is None:
        raise NotFound("API token")
    if row.revoked_at is None:
        row.revoked_at = datetime.now(UTC)
        audit(
            db,
            "api_token.revoked",
            org_id=me.org_id,
            user_id=me.user_id,
            target_type="api_token",
            target_id=row.id,
        )
        db.commit()
        forget_secret(row.token_hash)
    return Response(status_code=204)
