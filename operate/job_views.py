"""What a person sees of jobs, as plain data: the list (from visibility, as `switchback list`
prints it) and one job (its live state, else what it persisted; its result once it ended).
The console serves these as JSON; `switchback list` prints the rows."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.service import RPCError

from switchback.operate import metadata
from switchback.workflows.contract import (
    SA_COST,
    SA_LAST_ERROR,
    SA_PHASE,
    SA_PHASE_NUMBER,
    SA_STATUS,
    SA_TODO,
    SA_TODOS,
    SA_TOKENS,
    WORKFLOW_TYPE,
    JobResult,
    JobState,
)

# the statuses a job publishes while it runs (workflows/visibility.py); a run that is closed
# with one of them could not say how it ended (terminated, timed out, continued as new)
LIVE = frozenset({"starting", "running", "paused", "waiting_approval",
                  "waiting_for_instructions"})
CLOSED = {WorkflowExecutionStatus.TERMINATED: "terminated",
          WorkflowExecutionStatus.TIMED_OUT: "timed_out",
          WorkflowExecutionStatus.CANCELED: "cancelled",
          WorkflowExecutionStatus.FAILED: "failed",
          WorkflowExecutionStatus.CONTINUED_AS_NEW: "continued"}
ALL_JOBS = f'WorkflowType = "{WORKFLOW_TYPE}"'


def listed_status(published: str | None, execution: WorkflowExecutionStatus | None) -> str:
    """The status a list shows: the one the job published, unless its run is closed while
    that one still says it runs (a terminated job's search attribute stays `running`)."""
    if execution is None or execution == WorkflowExecutionStatus.RUNNING:
        return published or "running"
    if published and published not in LIVE:
        return published
    return CLOSED.get(execution, execution.name.lower())


async def job_rows(client: Client, query: str = ALL_JOBS, limit: int = 200) -> list[dict[str, Any]]:
    """One row per job run that visibility returns, newest first."""
    rows = []
    async for wf in client.list_workflows(query, limit=limit):
        sa = wf.typed_search_attributes
        state = listed_status(sa.get(SA_STATUS), wf.status)
        rows.append({
            "id": wf.id, "run_id": wf.run_id, "status": state,
            "phase": sa.get(SA_PHASE) or "", "phase_number": sa.get(SA_PHASE_NUMBER) or 0,
            "todos": sa.get(SA_TODOS) or "", "tokens": sa.get(SA_TOKENS) or 0,
            "cost": sa.get(SA_COST), "todo": sa.get(SA_TODO) or "",
            "last_error": sa.get(SA_LAST_ERROR) or "",
            "started": wf.start_time.isoformat() if wf.start_time else ""})
    return rows


async def job_view(client: Client, job_id: str, wait: float = 3.0) -> dict[str, Any]:
    """The job now: `state` (the live state query, or None when no worker answers), `memo`
    (what it persisted, when the query was not answered), `execution` (Temporal's status)
    and `result` (a completed job's JobResult: deliverables and their verification)."""
    handle = client.get_workflow_handle(job_id)
    desc = await handle.describe()
    view: dict[str, Any] = {"id": job_id, "execution": desc.status.name if desc.status else "",
                            "state": None, "memo": None, "result": None}
    try:
        st = await asyncio.wait_for(handle.query("state", result_type=JobState), wait)
        view["state"] = st.model_dump(mode="json")
    except (TimeoutError, RPCError, WorkflowQueryFailedError):
        found = await metadata.persisted(desc)
        if found is not None:
            view["memo"] = {"progress": found[0], "details": found[1]}
    if desc.status == WorkflowExecutionStatus.COMPLETED:
        done = await client.get_workflow_handle(job_id, result_type=JobResult).result()
        view["result"] = done.model_dump(mode="json")
    return view
