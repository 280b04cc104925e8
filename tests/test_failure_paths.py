"""Every way a job can fail ends the same way: `SwitchbackJobFailed` and `output/error.json`.

A tool run as a local activity, a workspace operation of a phase transition (local activities
too), a bug in workflow code (an exception the loop does not expect: without the catch the
workflow task would be retried forever) and an S3 outage while error.json is written.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.workflow import NondeterminismError, ReadOnlyContextError

from switchback.activities.storage import workspace as workspace_activities
from switchback.activities.tools import registry as tool_registry
from switchback.activities.tools import run as tools
from switchback.workflows.breakers import Breakers
from switchback.workflows.failures import unexpected
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical

LOCAL = ["read_file", "write_file", "list_files", "search_files", "delete_file", "todo_write",
         "tool_search"]
FAST = {"tools": {"retry": {"initial_interval_seconds": 0.1, "backoff_coefficient": 1}},
        "workspace": {"retry": {"maximum_attempts": 2}, "timeout_seconds": 5}}


async def failure_of(handle) -> tuple[str, dict]:
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 120)
    cause = info.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "SwitchbackJobFailed", cause
    return str(cause.message), cause.details[0] if cause.details else {}


async def error_json(s3, job_id: str) -> dict:
    raw = await s3.get("switchback", f"{job_id}/output/error.json")
    assert raw is not None, "no output/error.json"
    return json.loads(raw)


async def test_a_failing_local_activity_tool_fails_the_job_cleanly(
        client, task_queue, start_job, model_server, s3, monkeypatch):
    attempts: list[int] = []

    async def fetch_rates(files, args, limits):
        attempts.append(1)
        raise ConnectionError("rates service unreachable")

    spec = tool_registry.ToolSpec("fetch_rates", "Fetch exchange rates.", tool_registry.PathArgs)
    monkeypatch.setitem(tool_registry.TOOLS, "fetch_rates", spec)
    monkeypatch.setitem(tools.HANDLERS, "fetch_rates", fetch_rates)
    script = bootstrap() + [step(call("fetch_rates", path="rates.json"))] + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[], config={
            "extends": "creator", **FAST,
            "tools": {"domain": ["fetch_rates"], "local": [*LOCAL, "fetch_rates"]}})
        message, details = await failure_of(handle)
    assert "tool 'fetch_rates' (rates.json) failed after 3 attempts" in message
    assert "rates service unreachable" in message
    assert details == {"code": "tool_failed"} and len(attempts) == 3
    error = await error_json(s3, handle.id)
    assert error["code"] == "tool_failed" and error["phase"] == 2


async def test_a_failing_phase_transition_fails_the_job_cleanly(
        client, task_queue, start_job, model_server, s3, monkeypatch):
    def safe_dump(*args, **kwargs):
        raise ConnectionError("archive store unreachable")

    monkeypatch.setattr(workspace_activities, "yaml", SimpleNamespace(safe_dump=safe_dump))
    script = bootstrap() + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config={"extends": "creator", **FAST})
        message, details = await failure_of(handle)
    assert "archive/phase_2.yaml" in message and "archive store unreachable" in message
    assert details == {"code": "workspace_failed"}
    assert (await error_json(s3, handle.id))["code"] == "workspace_failed"


async def test_a_bug_in_workflow_code_fails_the_job_instead_of_retrying_forever(
        client, task_queue, start_job, model_server, s3, monkeypatch):
    observe = Breakers.observe

    def buggy(self, facts, *args, **kwargs):
        if facts.phase == 2 and facts.phase_steps == 2:
            return {}["no such key"]  # a KeyError, as a bug would raise it
        return observe(self, facts, *args, **kwargs)

    monkeypatch.setattr(Breakers, "observe", buggy)
    script = bootstrap() + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config="creator")
        message, details = await failure_of(handle)
    assert message.startswith("internal error in the workflow (KeyError at ")
    assert "'no such key'" in message and details == {"code": "internal_error"}
    error = await error_json(s3, handle.id)
    assert error["code"] == "internal_error" and error["phase"] == 2


async def test_the_job_fails_typed_when_error_json_cannot_be_written(
        client, task_queue, start_job, model_server, s3, monkeypatch):
    record = workspace_activities.WorkspaceActivities._record

    async def no_error_json(self, ws, path, text, content_type):
        if path == "output/error.json":
            raise ConnectionError("S3 unreachable")
        return await record(self, ws, path, text, content_type)

    monkeypatch.setattr(workspace_activities.WorkspaceActivities, "_record", no_error_json)
    script = bootstrap() + [{"error": {"status": 400}}]  # the endpoint refuses the request
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[], config={
            "extends": "creator", **FAST})
        message, details = await failure_of(handle)
    assert details == {"code": "model_call_failed"}
    assert "(output/error.json could not be written: " in message
    assert "S3 unreachable" in message
    assert await s3.get("switchback", f"{handle.id}/output/error.json") is None


@pytest.mark.parametrize(("error", "code"), [
    (KeyError("k"), "internal_error"),
    (AssertionError("the job has no strategy yet"), "internal_error"),
    (ApplicationError("config 'x' not found", type="BadConfig"), "activity_failed"),
    (NondeterminismError("replay diverged"), None),
    (ReadOnlyContextError("in a query"), None),
    (ApplicationError("failed", type="SwitchbackJobFailed"), None),
    (CancelledError("cancelled"), None),
])
def test_what_the_loop_catches_and_what_it_lets_through(error: Exception, code) -> None:
    failed = unexpected(error)
    assert (failed.code if failed else None) == code
