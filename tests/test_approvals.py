"""Approvals: a gated tool waits for the `approve` update; granted, denied, timed out."""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.client import WorkflowUpdateFailedError

from switchback.workflows.contract import ApproveRequest
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical
from tests.waits import temporal_cli, wait_state

GATED = {"extends": "creator", "approval_required": ["delete_file"],
         "tools": {"workspace": ["read_file", "write_file", "list_files", "search_files",
                                 "delete_file"]}}


def script() -> list[dict]:
    return (bootstrap() + [step(call("write_file", path="scratch.md", content="tmp"))]
            + [step(call("delete_file", path="scratch.md"))] + tactical(5) + finish())


def answers(model_server, job_id: str) -> list[str]:
    return [m["content"] for r in model_server.requests(job_id) for m in r["messages"]
            if m["role"] == "tool" and "approval" in m["content"] or
            m.get("content", "").startswith("Deleted")]


async def test_approval_granted_through_the_cli(client, task_queue, start_job, model_server,
                                                s3):
    async with running_worker(client, task_queue):
        handle = await start_job(script(), model_server, config=GATED, instructions="x",
                                 documents=[])
        st = await wait_state(handle, lambda s: bool(s.pending_approvals))
        pending = st.pending_approvals[0]
        assert st.status == "waiting_approval"
        assert pending.tool == "delete_file" and "scratch.md" in pending.arguments
        assert await s3.get("switchback", f"{handle.id}/scratch.md") is not None
        out = await asyncio.to_thread(
            temporal_cli, client, "workflow", "update", "execute", "--workflow-id", handle.id,
            "--name", "approve", "--input",
            json.dumps({"call_id": pending.call_id, "approved": True, "note": "fine"}))
        assert "approved delete_file" in out
        assert (await handle.result()).status == "completed"
    assert await s3.get("switchback", f"{handle.id}/scratch.md") is None


async def test_approval_denied_and_unknown_call_rejected(client, task_queue, start_job,
                                                        model_server, s3):
    async with running_worker(client, task_queue):
        handle = await start_job(script(), model_server, config=GATED, instructions="x",
                                 documents=[])
        st = await wait_state(handle, lambda s: bool(s.pending_approvals))
        with pytest.raises(WorkflowUpdateFailedError) as info:
            await handle.execute_update("approve", ApproveRequest(call_id="call_nope",
                                                                  approved=True))
        assert "no tool call 'call_nope' is waiting for approval" in str(info.value.cause)
        assert st.pending_approvals[0].call_id in str(info.value.cause)
        await handle.execute_update("approve", ApproveRequest(
            call_id=st.pending_approvals[0].call_id, approved=False, note="keep it"),
            result_type=str)
        assert (await handle.result()).status == "completed"
    assert await s3.get("switchback", f"{handle.id}/scratch.md") is not None
    denial = [a for a in answers(model_server, handle.id) if "approval_denied" in a]
    assert denial and "denied by the operator: keep it" in denial[0]


async def test_approval_timeout_denies(client, task_queue, start_job, model_server, s3):
    config = {**GATED, "approvals": {"timeout_seconds": 1}}
    async with running_worker(client, task_queue):
        handle = await start_job(script(), model_server, config=config, instructions="x",
                                 documents=[])
        assert (await handle.result()).status == "completed"
    assert await s3.get("switchback", f"{handle.id}/scratch.md") is not None
    denial = [a for a in answers(model_server, handle.id) if "approval_denied" in a]
    assert denial and "nobody answered within 1s" in denial[0]
