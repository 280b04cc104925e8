"""Replay histories against the current workflow code and say what diverged, in words.

Used by `starter.py replay` (a job's whole continue-as-new chain, fetched through the
client, or a file exported with `temporal workflow show --output json`) and by the
tests that replay the committed histories in tests/histories/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.worker import Replayer

from switchback.workflows.agent_job import AgentJob


@dataclass
class ReplayReport:
    workflow_id: str
    run_id: str
    ok: bool
    events: int
    detail: str = ""


async def replay(histories: list[WorkflowHistory], converter: DataConverter
                 ) -> list[ReplayReport]:
    replayer = Replayer(workflows=[AgentJob], data_converter=converter)
    out = []
    for h in histories:
        res = await replayer.replay_workflow(h, raise_on_replay_failure=False)
        run_id = (h.events[0].workflow_execution_started_event_attributes.original_execution_run_id
                  if h.events else "")
        out.append(ReplayReport(h.workflow_id, run_id, res.replay_failure is None,
                                len(h.events), explain(res.replay_failure)))
    return out


async def chain(client: Client, workflow_id: str) -> list[WorkflowHistory]:
    """Every run of a job (continue-as-new chain), oldest first."""
    runs = [wf async for wf in client.list_workflows(f'WorkflowId="{workflow_id}"')]
    if not runs:
        raise LookupError(f"no workflow with id '{workflow_id}'")
    runs.sort(key=lambda wf: wf.start_time)
    return [await client.get_workflow_handle(workflow_id, run_id=wf.run_id).fetch_history()
            for wf in runs]


def explain(failure: Exception | None) -> str:
    """One paragraph a person can act on."""
    if failure is None:
        return ""
    text = " ".join(str(failure).split())
    event = re.search(r"[Ee]vent(?: ?[Ii][Dd])?[ :#]*(\d+)", text)
    where = f" at history event {event.group(1)}" if event else ""
    if "ondeterminism" in text or "TMPRL1100" in text:
        return (f"NONDETERMINISM{where}: the current workflow code issues different commands "
                f"than the recorded run did. {text[:600]} - Guard the change with "
                "workflow.patched('<change-id>') so that runs recorded before it keep the old "
                "path, or replay with the code version that recorded the run.")
    return f"REPLAY FAILED{where}: {type(failure).__name__}: {text[:600]}"
