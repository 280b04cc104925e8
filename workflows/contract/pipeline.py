"""DocumentPipeline's input and result, and what its activities exchange."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.contract.job import DocumentSpec
from workflows.contract.requests import WorkspaceRef


class PipelineInput(BaseModel):
    """DocumentPipeline input (plain JSON): a Creator job, then a Validator per requirement.
    Checked by `inputs.pipeline_input` in the workflow's first step."""

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
