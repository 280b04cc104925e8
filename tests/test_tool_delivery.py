"""A tool's side effect happens once, or the model is told it may have (activities/tools/
delivery.py). The tools (tests/tool_package) append a line per execution to a log and then
sleep, so an attempt dies with its effect done and its answer not: by a timeout (the attempt
outlives its start-to-close timeout and is retried), or by a worker SIGKILLed mid-call.

- at_most_once (`@tool(delivery="at_most_once")`): executed once; the retry does not call
  the tool, and the model reads `unknown_outcome`;
- at_least_once (the default): the retry calls the tool again, and succeeds;
- both: every attempt of one call carries the same idempotency key.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import uuid
from pathlib import Path

from mcp import types

from switchback.activities.tools.listing import mcp_delivery
from switchback.operate.live import job_events
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_durability import worker_process

TOOLS = {"domain": ["test_send", "test_touch"], "timeout_seconds": 2,
         "retry": {"initial_interval_seconds": 0.5, "backoff_coefficient": 3}}
CONFIG = {"strategy": "react", "tools": TOOLS}


def lines(log: Path) -> list[list[str]]:
    return [ln.split(" ", 2) for ln in log.read_text().splitlines()] if log.exists() else []


def tool_answers(model_server, job_id: str) -> list[str]:
    """The tool messages the model was sent, in order (the last request has them all)."""
    last = model_server.requests(job_id)[-1]
    return [str(m.get("content")) for m in last["messages"] if m.get("role") == "tool"]


def finish() -> dict:
    return step(call("job_complete", summary="done", deliverables=[], confidence=0.9, notes=""))


async def test_a_timed_out_attempt(client, task_queue, model_server, s3, tmp_path,
                                   monkeypatch) -> None:
    log = tmp_path / "effects.log"
    monkeypatch.setenv("SWITCHBACK_TEST_TOOL_LOG", str(log))
    monkeypatch.setenv("SWITCHBACK_TEST_TOOL_SLEEP", "6")  # > tools.timeout_seconds
    job_id = f"job-{uuid.uuid4().hex[:8]}"
    model_server.set_script(job_id, [step(call("test_send", message="invoice 7")),
                                     step(call("test_touch", message="note")), finish()])
    async with running_worker(client, task_queue):
        handle = await client.start_workflow("AgentJob", JobInput(
            config=CONFIG, instructions="send it"), id=job_id, task_queue=task_queue,
            result_type=JobResult)
        result = await asyncio.wait_for(handle.result(), 120)
    assert result.status == "completed" and "test_send (" in result.notes
    assert "test_touch" not in result.notes  # retried to success: nothing unknown
    done = lines(log)
    sends = [ln for ln in done if ln[0] == "test_send"]
    touches = [ln for ln in done if ln[0] == "test_touch"]
    assert len(sends) == 1  # at most once: the retry did not send again
    assert len(touches) == 2 and touches[0][1] == touches[1][1]  # retried, same key
    assert sends[0][1] != touches[0][1] and len(sends[0][1]) == 32
    answers = tool_answers(model_server, job_id)
    assert answers[0].startswith("Error [unknown_outcome]") and "test_send" in answers[0]
    assert answers[1] == "test_touch done: note"
    intents = await s3.list("switchback", f"{job_id}/.switchback/intents/")
    assert len(intents) == 1  # only the at-most-once call keeps an intent


async def test_a_worker_killed_mid_call(client, task_queue, model_server, s3, tmp_path) -> None:
    log = tmp_path / "effects.log"
    env = {"SWITCHBACK_TEST_TOOL_LOG": str(log), "SWITCHBACK_TEST_TOOL_SLEEP": "60"}
    os.environ.update(env)  # for worker_process (it copies the environment)
    job_id = f"job-{uuid.uuid4().hex[:8]}"
    model_server.set_script(job_id, [step(call("test_send", message="wire 100 EUR")),
                                     finish()])
    first = worker_process(client, task_queue, tmp_path / "w1.log")
    second = None
    try:
        handle = await client.start_workflow("AgentJob", JobInput(
            config={**CONFIG, "tools": {**TOOLS, "timeout_seconds": 5}}, instructions="pay"),
            id=job_id, task_queue=task_queue, result_type=JobResult)
        for _ in range(600):  # the effect happened; the answer has not
            if lines(log):
                break
            await asyncio.sleep(0.1)
        assert lines(log), (tmp_path / "w1.log").read_text()[-2000:]
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        second = worker_process(client, task_queue, tmp_path / "w2.log")
        result = await asyncio.wait_for(handle.result(), 120)
    finally:
        for k in env:
            os.environ.pop(k, None)
        for p in (first, second):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    assert result.status == "completed"
    assert "outcome is unknown" in result.notes and "test_send (" in result.notes
    assert len(lines(log)) == 1  # the payment went out once
    answer = tool_answers(model_server, job_id)[0]
    assert answer.startswith("Error [unknown_outcome]"), answer
    intent = json.loads(await s3.get("switchback", (await s3.list(
        "switchback", f"{job_id}/.switchback/intents/"))[0].key) or b"{}")
    assert intent["state"] == "started" and intent["tool"] == "test_send"


def test_an_mcp_tools_delivery_from_its_annotations_or_the_operator() -> None:
    def tool(**hints: bool) -> types.Tool:
        return types.Tool(name="t", input_schema={"type": "object"},
                          annotations=types.ToolAnnotations(**hints) if hints else None)

    assert mcp_delivery(tool(), None) == "at_least_once"  # says nothing: retried, as before
    assert mcp_delivery(tool(readOnlyHint=True), None) == "at_least_once"
    assert mcp_delivery(tool(idempotentHint=True), None) == "at_least_once"
    assert mcp_delivery(tool(readOnlyHint=False, destructiveHint=True), None) == "at_most_once"
    assert mcp_delivery(tool(idempotentHint=False), None) == "at_most_once"
    assert mcp_delivery(tool(readOnlyHint=True), "at_most_once") == "at_most_once"  # operator


def test_the_key_tells_apart_calls_whose_ids_repeat_across_turns() -> None:
    """A model's call ids (or the `sb_call_<n>` given to calls without one) repeat across a
    conversation's turns: the key is of the assistant message too."""
    from switchback.activities.tools.delivery import idempotency_key
    from switchback.workflows.contract import ToolLimits, ToolRequest, WorkspaceRef

    def req(assistant_index: int) -> ToolRequest:
        return ToolRequest(workspace=WorkspaceRef(bucket="b", job_id="j"), conversation="c",
                           assistant_index=assistant_index, call_id="sb_call_1",
                           name="test_send", result_index=assistant_index + 1,
                           limits=ToolLimits(read_max_chars=1, max_file_bytes=1,
                                             min_todos=1, max_todos=1))
    assert idempotency_key(req(3)) == idempotency_key(req(3))
    assert idempotency_key(req(3)) != idempotency_key(req(7))


async def test_a_cancel_while_a_tool_runs_ends_the_job(client, task_queue, model_server, s3,
                                                       tmp_path, monkeypatch) -> None:
    """The tool runs to its end (its activity waits for the cancellation), its outcome is
    recorded, then the job ends `cancelled`: no model call after the cancel."""
    log = tmp_path / "effects.log"
    monkeypatch.setenv("SWITCHBACK_TEST_TOOL_LOG", str(log))
    monkeypatch.setenv("SWITCHBACK_TEST_TOOL_SLEEP", "3")  # < tools.timeout_seconds
    job_id = f"job-{uuid.uuid4().hex[:8]}"
    model_server.set_script(job_id, [step(call("test_touch", message="a")),
                                     step(call("test_touch", message="b")), finish()])
    config = {**CONFIG, "tools": {**TOOLS, "timeout_seconds": 20}}
    async with running_worker(client, task_queue):
        handle = await client.start_workflow("AgentJob", JobInput(
            config=config, instructions="touch"), id=job_id, task_queue=task_queue,
            result_type=JobResult)
        for _ in range(300):  # the tool is running: its effect is logged, its answer not
            if lines(log):
                break
            await asyncio.sleep(0.05)
        await handle.cancel()
        outcome = None
        for _ in range(300):
            outcome = (await handle.describe()).status
            if outcome is not None and outcome.name != "RUNNING":
                break
            await asyncio.sleep(0.1)
        events = [e async for _, e in job_events(client, job_id, follow=False)]
    assert outcome is not None and outcome.name == "CANCELED", outcome
    # the tool's outcome is recorded before the cancel ends the job: the stream shows it
    assert [e["name"] for e in events if e["kind"] == "tool.result"] == ["test_touch"], events
    assert [ln[2] for ln in lines(log)] == ["a"]  # the second call never ran
    assert len(model_server.requests(job_id)) == 1  # no model call after the cancel
