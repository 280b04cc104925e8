"""DocumentPipeline's names, input and result, and what its activities exchange.

The workflow refers to its activities only by these names; the app registers them under
them (app.py). Renaming one is a change running pipelines would see."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from switchback.workflows.contract.inputs import (
    InputError,
    config_field,
    documents_field,
    input_object,
    shown,
    text_field,
)
from switchback.workflows.contract.job import DocumentSpec
from switchback.workflows.contract.requests import WorkspaceRef

PIPELINE_TYPE = "DocumentPipeline"
READ_REQUIREMENTS = "read_requirements"
READ_DECISION = "read_decision"


class PipelineInput(BaseModel):
    """DocumentPipeline input (plain JSON): a Creator job, then a Validator per requirement.
    Checked by `pipeline_input` in the workflow's first step."""

    model_config = ConfigDict(extra="forbid")

    creator_config: str | dict[str, Any] = "creator"
    validator_config: str | dict[str, Any] = "validator"
    instructions: str | None = None  # for the creator (default: its config's own)
    documents: list[str | DocumentSpec] | None = None  # for the creator
    max_concurrent: int = Field(3, ge=1, le=100)  # validator jobs at a time


class RequirementRef(BaseModel):
    id: str
    statement: str
    regime: str = ""
    record: dict[str, Any] = {}  # the requirement as the creator wrote it (capped)


class ReadRequirementsRequest(BaseModel):
    workspace: WorkspaceRef
    path: str = "output/requirements.json"


class ValidationOutcome(BaseModel):
    requirement_id: str
    job_id: str
    status: str  # the validator job's status, or "failed"
    decision: str | None = None  # accept | duplicate | reject
    duplicate_of: str | None = None
    reason: str = ""
    error: str | None = None


class PipelineResult(BaseModel):
    status: Literal["completed", "completed_with_failures", "failed"]
    creator_job: str
    requirements: int = 0
    decisions: dict[str, int] = {}
    failed: list[str] = []


def pipeline_input(raw: object) -> PipelineInput:
    """DocumentPipeline's input from raw JSON (every key optional)."""
    what = "pipeline input"
    d = input_object(raw if raw is not None else {}, what, tuple(PipelineInput.model_fields),
                'e.g. {"max_concurrent": 3}')
    out: dict[str, Any] = {}
    for key in ("creator_config", "validator_config"):
        if key in d:
            out[key] = config_field(d, key, what)
    out["instructions"] = text_field(d, "instructions", what)
    out["documents"] = documents_field(d, "documents", what)
    if "max_concurrent" in d:
        n = d["max_concurrent"]
        if type(n) is not int or not 1 <= n <= 100:
            raise InputError(f"{what}: 'max_concurrent' must be a whole number from 1 to 100, "
                             f"got {shown(n)}")
        out["max_concurrent"] = n
    return PipelineInput(**out)
