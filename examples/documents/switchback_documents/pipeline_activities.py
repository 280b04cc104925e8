"""Activities of the DocumentPipeline: read what one job left for the next.

`read_requirements` reads the creator's `output/requirements.json` (the
requirement list, each capped); `read_decision` reads a validator job's
`output/decision.json`. A missing or malformed file is a clear, non-retryable
error (the job that should have written it is at fault, not the storage).
"""

from __future__ import annotations

import json

from temporalio import activity
from temporalio.exceptions import ApplicationError

from switchback.activities.storage.s3 import S3Store
from switchback.workflows.contract import WorkspaceRef
from switchback_documents.pipeline_contract import (
    READ_DECISION,
    READ_REQUIREMENTS,
    ReadRequirementsRequest,
    RequirementRef,
)

MAX_RECORD_CHARS = 4000


class PipelineActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=READ_REQUIREMENTS)
    async def read_requirements(self, req: ReadRequirementsRequest) -> list[RequirementRef]:
        ws = req.workspace
        raw = await self.s3.get(ws.bucket, f"{ws.job_id}/{req.path}")
        if raw is None:
            raise ApplicationError(f"job '{ws.job_id}' wrote no {req.path}",
                                   type="MissingOutput", non_retryable=True)
        try:
            items = json.loads(raw)["requirements"]
            refs = []
            for n, r in enumerate(items, 1):
                record = r if len(json.dumps(r)) <= MAX_RECORD_CHARS else {
                    k: r[k] for k in ("id", "statement", "regime") if k in r}
                refs.append(RequirementRef(id=str(r.get("id") or f"REQ-{n:03d}"),
                                           statement=str(r["statement"])[:2000],
                                           regime=str(r.get("regime", "")), record=record))
            return refs
        except (ValueError, KeyError, TypeError) as e:
            raise ApplicationError(f"{ws.job_id}/{req.path} is not a requirements list: {e}",
                                   type="BadOutput", non_retryable=True) from e

    @activity.defn(name=READ_DECISION)
    async def read_decision(self, ws: WorkspaceRef) -> dict:
        raw = await self.s3.get(ws.bucket, f"{ws.job_id}/output/decision.json")
        if raw is None:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return {"error": "output/decision.json is not valid JSON"}
        return data if isinstance(data, dict) else {"error": "decision.json is not an object"}
