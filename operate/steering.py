"""Steering a job: the signals and updates the CLI and the console send, checked the same way
(workflows/contract/inputs.py) and answered in one line. Nothing here prints: `switchback
<command>` prints the answer, the console shows it.

A refused update (the job said no: an unknown call id, a turn while one runs) raises
`Refused` with the job's reason; bad input raises `InputError` naming the field.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowUpdateFailedError

from switchback.workflows.contract import ApproveRequest, inputs


class Refused(Exception):
    """The job refused the update; the message is its reason."""


async def _update(client: Client, job_id: str, name: str, payload: object) -> str:
    try:
        answer: str = await client.get_workflow_handle(job_id).execute_update(
            name, payload, result_type=str)
    except WorkflowUpdateFailedError as e:
        raise Refused(str(e.cause or e)) from None
    return answer


async def approve(client: Client, job_id: str, call_id: str, approved: bool,
                  note: str = "") -> str:
    req = ApproveRequest(call_id=call_id, approved=approved, note=note)
    return await _update(client, job_id, "approve", req)


async def instruct(client: Client, job_id: str, text: str) -> str:
    """The job's next instruction (a follow-up turn); the job says whether it took it."""
    inputs.instruction(text)
    return await _update(client, job_id, "instruct", text)


async def rewind(client: Client, job_id: str, issue: str, restore_phase: int | None) -> str:
    payload: str | dict[str, Any] = issue
    if restore_phase is not None:
        payload = {"issue": issue, "restore_phase": restore_phase}
    inputs.rewind_request(payload)
    await client.get_workflow_handle(job_id).signal("rewind", payload)
    return f"sent rewind to {job_id}" + (f" (restore the workspace to the start of phase "
                                         f"{restore_phase})" if restore_phase else "")


async def pause(client: Client, job_id: str, resume: bool = False) -> str:
    name = "resume" if resume else "pause"
    await client.get_workflow_handle(job_id).signal(name)
    return f"sent {name} to {job_id}"


async def cancel(client: Client, job_id: str) -> str:
    await client.get_workflow_handle(job_id).cancel()
    return f"cancel requested for {job_id}"
