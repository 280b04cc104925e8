"""MCP tools killed mid-call (activities/tools/delivery.py): the notes server's `send` is
annotated destructive and not idempotent (at_most_once), `send_deduplicated` idempotent
(at_least_once) and deduplicates by the call's idempotency key. Each writes a line per
execution to a log, then sleeps on the first call of a key: the effect is done, the answer
is not. The attempt then dies - it outlives its timeout, or the server is SIGKILLed while it
holds the call - and Temporal retries it:

- `send`: executed once; the retry does not call the server; the model reads unknown_outcome;
- `send_deduplicated`: the retry calls the server with the same key, which answers it from
  its log: executed once, and the model reads the answer.
"""

from __future__ import annotations

import asyncio
import uuid

from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker
from tests.mcp.conftest import children, kill
from tests.scripts import call, step


def effects(log) -> list[list[str]]:
    return [ln.split(" ", 2) for ln in log.read_text().splitlines()] if log.exists() else []


def tool_answers(model_server, job_id: str) -> list[str]:
    last = model_server.requests(job_id)[-1]
    return [str(m.get("content")) for m in last["messages"] if m.get("role") == "tool"]


async def run_job(client, task_queue, model_server, mcp, job_id, script, timeout_seconds,
                  while_running=None) -> JobResult:
    model_server.set_script(job_id, script + [step(call(
        "job_complete", summary="done", deliverables=[], confidence=0.9, notes=""))])
    config = {"strategy": "react", "tools": {
        "domain": ["notes.send", "notes.send_deduplicated"], "timeout_seconds": timeout_seconds,
        "retry": {"initial_interval_seconds": 0.2, "backoff_coefficient": 1}}}
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await client.start_workflow("AgentJob", JobInput(config=config,
                                                                  instructions="send"),
                                             id=job_id, task_queue=task_queue,
                                             result_type=JobResult)
        if while_running is not None:
            await while_running()
        return await asyncio.wait_for(handle.result(), 120)


async def test_calls_that_outlive_their_timeout(client, task_queue, model_server, s3, mcp,
                                                tmp_path) -> None:
    log, job_id = tmp_path / "sent.log", f"job-{uuid.uuid4().hex[:8]}"
    result = await run_job(client, task_queue, model_server, mcp, job_id, [
        step(call("notes__send", message="invoice", log=str(log), pause=8)),
        step(call("notes__send_deduplicated", message="receipt", log=str(log), pause=8))], 3)
    assert result.status == "completed"
    sent = effects(log)
    assert [e[0] for e in sent] == ["send", "dedup"]  # each executed once
    assert all(len(e[1]) == 32 for e in sent) and sent[0][1] != sent[1][1]
    answers = tool_answers(model_server, job_id)
    assert answers[0].startswith("Error [unknown_outcome]") and "notes__send" in answers[0]
    assert answers[1] == "already sent: receipt"  # the retry, answered by the server's dedup
    assert "notes__send (" in result.notes and "send_deduplicated" not in result.notes


async def test_a_server_killed_while_it_holds_the_call(client, task_queue, model_server, s3,
                                                       mcp, tmp_path) -> None:
    log, job_id = tmp_path / "sent.log", f"job-{uuid.uuid4().hex[:8]}"

    async def kill_the_server_mid_call() -> None:
        for _ in range(300):
            if effects(log):
                break
            await asyncio.sleep(0.1)
        assert effects(log), "the call never reached the server"
        kill(children("notes_server.py stdio"))  # the stdio server holding the call (not the
        # session's HTTP one other tests use)

    result = await run_job(client, task_queue, model_server, mcp, job_id, [
        step(call("notes__send", message="payment", log=str(log), pause=30))], 60,
        kill_the_server_mid_call)
    assert result.status == "completed"
    assert [e[0] for e in effects(log)] == ["send"]  # not sent again by a new server
    assert tool_answers(model_server, job_id)[0].startswith("Error [unknown_outcome]")
