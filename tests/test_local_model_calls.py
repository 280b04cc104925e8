"""A fast endpoint's model calls run as local activities when the job opts in (patch
`local-model-calls`, workflows/model_steps.py): while the call before answered in under
LOCAL_CALL_BELOW_SECONDS (2 s), at most `llm.local_calls_in_a_row` in a row, only where
the worker runs call_model itself. What must hold: the chain is bounded (the next call goes
through the server, so progress, queries and signals wait at most that many calls), a slow
endpoint never holds a workflow task open, the worker can say no, and the job's result and
stored conversations are those of a job whose every call went through the server."""

from __future__ import annotations

import collections

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter

from switchback.operate.replay import replay
from switchback.worker import local_model_calls
from switchback.workflows.model_steps import LOCAL_CALL_BELOW_SECONDS
from tests.conftest import running_worker
from tests.markers import local_activity
from tests.scripts import full_job
from tests.test_durability import across_a_worker_kill, slow
from tests.test_job_end_to_end import assert_conversations_whole
from tests.waits import wait_for_requests


def model_calls(events) -> str:
    """One letter per model call, in order: L run as a local activity, S through the server."""
    out = []
    for e in events:
        if local_activity(e) == "call_model":
            out.append("L")
        elif (e.HasField("activity_task_scheduled_event_attributes")
              and e.activity_task_scheduled_event_attributes.activity_type.name == "call_model"):
            out.append("S")
    return "".join(out)


OPT_IN = {"local_calls_in_a_row": 3}


def config(**llm) -> dict:
    return {"extends": "creator", "llm": {**OPT_IN, **llm}}


async def run(client, task_queue, start_job, model_server, script, **llm):
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config=config(**llm))
        result = await handle.result()
    return handle, result


async def test_fast_calls_run_locally_three_in_a_row_then_one_through_the_server(
        client, task_queue, start_job, model_server, s3):
    script = full_job(2)
    handle, result = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed" and result.steps == len(script)
    history = await handle.fetch_history()
    calls = model_calls(history.events)
    assert len(calls) == len(script)
    # the first call has no call before it to time: through the server; then runs of at most
    # three local calls, each ended by one through the server
    assert calls.startswith("S") and "LLLL" not in calls
    assert calls.count("L") >= 3 * (len(calls) // 4), calls
    # the same job as with every call through the server: whole conversations, a replay
    await assert_conversations_whole(s3, handle.id, phases=5)
    [report] = await replay([history], pydantic_data_converter)
    assert report.ok, report.detail


async def test_a_call_after_a_slow_answer_goes_through_the_server(
        client, task_queue, start_job, model_server):
    """Calls 2 and 5 answer just slower than LOCAL_CALL_BELOW_SECONDS: the call after each
    goes through the server, though the chain of local calls could go on."""
    script = full_job(1)
    late = int(LOCAL_CALL_BELOW_SECONDS * 1000) + 100
    for i in (1, 4):
        script[i] = {**script[i], "latency_ms": late}
    handle, result = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed"
    calls = model_calls((await handle.fetch_history()).events)
    assert len(calls) == len(script) and calls[:7] == "SLSLLSL", calls


async def test_no_local_calls_where_the_job_or_the_worker_says_no(
        client, task_queue, start_job, model_server, monkeypatch):
    script = full_job(1)
    handle, _ = await run(client, task_queue, start_job, model_server, script,
                          local_calls_in_a_row=0)  # the default: no job runs them unasked
    assert model_calls((await handle.fetch_history()).events) == "S" * len(script)
    monkeypatch.setenv("SWITCHBACK_LOCAL_MODEL_CALLS", "0")
    handle, _ = await run(client, task_queue, start_job, model_server, script)
    assert model_calls((await handle.fetch_history()).events) == "S" * len(script)


@pytest.mark.parametrize(("role", "model_queue", "env", "local"), [
    ("all", None, None, True), ("all", "model-q", None, False),  # call_model on another queue
    ("workflows", None, None, False), ("all", None, "0", False)])
def test_only_a_worker_that_runs_call_model_itself_allows_local_calls(
        role, model_queue, env, local, monkeypatch):
    if env is not None:
        monkeypatch.setenv("SWITCHBACK_LOCAL_MODEL_CALLS", env)
    assert local_model_calls(role, model_queue) is local


async def test_a_worker_killed_mid_chain_the_next_makes_the_calls_again_with_their_answers(
        client, task_queue, start_job, model_server, s3, tmp_path):
    """The 20th call and the two before it run in one workflow task, which the killed worker
    never completed: the next worker (after that task's timeout) makes them again, and they
    take the answers their first run stored - the job ends as if nothing happened."""
    script = slow(full_job(3), 100)
    handle, result = await across_a_worker_kill(
        client, task_queue, tmp_path,
        lambda: start_job(script, model_server, instructions="x", documents=[],
                          config=config()),
        lambda h: wait_for_requests(model_server, h.id, 20))
    assert result.status == "completed" and result.phases == 7
    asked = collections.Counter(r["_call_key"] for r in model_server.requests(handle.id))
    assert len(asked) == len(script) == result.steps  # each scripted answer used once
    assert sum(n > 1 for n in asked.values()) >= 2, asked  # the chain, made again
    assert "L" in model_calls((await handle.fetch_history()).events)
    files = {o.key.split("/", 1)[1] for o in await s3.list("switchback", f"{handle.id}/work/")}
    assert files == {f"work/p{p}_{i}.md" for p in (1, 2, 3) for i in range(1, 6)}
    await assert_conversations_whole(s3, handle.id, phases=7)


async def test_a_local_call_that_fails_is_retried_through_the_server(
        client, task_queue, start_job, model_server):
    """Call 3 (local: call 2 was fast) gets a 500: no retry inside the workflow task - the call
    goes through the server, whose attempts the web UI and history show (a 429 with its
    Retry-After, then the answer); a 400 that no retry mends fails the step at once."""
    script = full_job(1)
    script[2:2] = [{"error": {"status": 500, "message": "boom"}},
                   {"error": {"status": 429, "retry_after": 1, "message": "slow down"}}]
    handle, result = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed"
    events = (await handle.fetch_history()).events
    assert model_calls(events).startswith("SLLS")  # call 3 failed locally, then the server
    failed = [e for e in events if local_activity(e) == "call_model"
              and e.marker_recorded_event_attributes.HasField("failure")]
    assert len(failed) == 1 and "HTTP 500" in str(failed[0].marker_recorded_event_attributes
                                                   .failure)
    attempts = [e.activity_task_started_event_attributes.attempt for e in events
                if e.HasField("activity_task_started_event_attributes")]
    assert max(attempts) == 2  # the 429, then the answer

    bad = full_job(1)[:2] + [{"error": {"status": 400, "message": "context too long"}}]
    async with running_worker(client, task_queue):
        handle = await start_job(bad, model_server, instructions="x", documents=[],
                                 config=config())
        with pytest.raises(WorkflowFailureError) as info:
            await handle.result()
    assert "HTTP 400" in str(info.value.cause) and "context too long" in str(info.value.cause)
    events = (await handle.fetch_history()).events
    assert model_calls(events) == "SLL"  # call 3 failed locally for good: not sent again
