"""The sizing answer's public shape (GET /sizing/...; the weekly report reads the same model)."""

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

# What a sizing answer (and a history or accuracy query) is about.
SubjectKind = Literal["server", "cluster"]
# Which stored curve answers: best = calibrated when there is one, else the proportional estimate.
CurveKind = Literal["best", "calibrated", "optimal", "proportional"]


class Band(BaseModel):
    low: float | None = Field(
        description="pessimistic end (less hit ratio, or more memory); null if unreachable"
    )
    high: float | None = Field(description="optimistic end")
    source: Literal["model", "accuracy_record", "default"] = Field(
        description="model: the worker's band; accuracy_record: ± the mean absolute error of recent "
        "predictions; "
        "default: ± 6 pp"
    )


class CurveInfo(BaseModel):
    computed_at: datetime
    window_end: datetime
    age_seconds: float = Field(description="seconds since the end of the window the curve was measured in")
    current_bytes: int | None
    measured_hit_ratio: float | None
    max_bytes: float = Field(description="largest memory the curve covers")
    max_hit_ratio: float = Field(description="hit ratio at max_bytes")
    stream_loss_ratio: float | None = Field(
        default=None,
        description="server curves: share of memcached's watch events the agent lost in the curve's "
        "window (lost events shorten the measured reuse distances)",
    )
    stream_loss_flagged: bool | None = Field(
        default=None, description="server curves: the loss was above the agent's threshold"
    )


class Subject(BaseModel):
    type: SubjectKind
    id: uuid.UUID


class SizingAnswer(BaseModel):
    subject: Subject
    question: Literal["memory_for_hit_ratio", "hit_ratio_at_memory", "nodes_for_hit_ratio"]
    status: Literal["ok", "unreachable", "beyond_curve"] = Field(
        description="unreachable: the target is above the curve's maximum; "
        "beyond_curve: the memory is past the "
        "curve's last point, hit_ratio is then a lower bound"
    )
    basis: Literal["estimate", "calibrated", "simulated"]
    policy: str | None = Field(description="the replacement policy of a simulated basis")
    target_hit_ratio: float | None = None
    memory_bytes: float | None = None
    hit_ratio: float | None = None
    nodes: int | None = None
    node_size_bytes: int | None = None
    band: Band
    curve: CurveInfo
    message: str

    model_config = {
        "json_schema_extra": {
            "examples": [
                {
                    "subject": {"type": "server", "id": "3f0c2a9e-3f55-4a0e-9a53-0d6a5e1c2b11"},
                    "question": "memory_for_hit_ratio",
                    "status": "ok",
                    "basis": "calibrated",
                    "policy": None,
                    "target_hit_ratio": 0.92,
                    "memory_bytes": 12240656793.6,
                    "hit_ratio": None,
                    "nodes": None,
                    "node_size_bytes": None,
                    "band": {"low": 13421772800.0, "high": 11274289152.0, "source": "model"},
                    "curve": {
                        "computed_at": "2026-11-22T12:01:05Z",
                        "window_end": "2026-11-22T12:01:00Z",
                        "age_seconds": 42.0,
                        "current_bytes": 8589934592,
                        "measured_hit_ratio": 0.8358,
                        "max_bytes": 17179869184.0,
                        "max_hit_ratio": 0.955,
                    },
                    "message": "a hit ratio of 92.0% needs 11.40 GiB (band 10.50–12.50 GiB), "
                    "calibrated curve, 42 s old",
                }
            ]
        }
    }


class NotEnoughData(BaseModel):
    detail: str
    code: Literal["not_enough_data"]
