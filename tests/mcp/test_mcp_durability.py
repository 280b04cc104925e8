"""MCP servers that die do not fail the job: a stdio server SIGKILLed between calls or in the
middle of one is started afresh for the next attempt. A server that does not start is named,
at the worker's start and in the job's failure."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from temporalio.client import WorkflowFailureError

from switchback.activities.tools.mcp_sessions import McpServers
from switchback.worker import report_tools
from tests.conftest import running_worker
from tests.markers import local_activity_data
from tests.mcp.conftest import NOTES, QUIET, children, kill, servers_config
from tests.scripts import bootstrap, call, finish, step
from tests.waits import wait_for_requests

FAST_RETRY = {"initial_interval_seconds": 0.2, "backoff_coefficient": 1}


def attempts(history, tool_prefix: str = "") -> list[tuple[int, str]]:
    """(attempt, last failure) of each started run_tool activity."""
    scheduled = {e.event_id: e for e in history.events
                 if e.HasField("activity_task_scheduled_event_attributes")}
    out = []
    for e in history.events:
        if e.HasField("activity_task_started_event_attributes"):
            a = e.activity_task_started_event_attributes
            s = scheduled[a.scheduled_event_id]
            if tool_prefix in s.user_metadata.summary.data.decode():
                out.append((a.attempt, a.last_failure.message))
    return out


def local_attempts(history, activity_type: str) -> list[int]:
    """The attempt count in each local activity marker of `activity_type`."""
    return [data["attempt"] for e in history.events
            if (data := local_activity_data(e)) is not None
            and data.get("activity_type") == activity_type]


async def test_a_server_killed_between_calls_is_restarted(client, task_queue, start_job,
                                                          model_server, s3, mcp):
    n = len(bootstrap())
    script = bootstrap() + [
        step(call("time__get_current_time", timezone="UTC")),
        {**step(call("write_file", path="t1.json", content="{{last_tool_result}}")),
         "latency_ms": 5000},  # the server is killed while the model "thinks"
        step(call("time__get_current_time", timezone="Asia/Tokyo")),
        step(call("write_file", path="t2.json", content="{{last_tool_result}}")),
    ] + [step(call("todo_complete", notes=f"t{i}")) for i in range(5)] + finish()
    config = {"tools": {"domain": ["time.*"], "retry": FAST_RETRY}}
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        await wait_for_requests(model_server, handle.id, n + 2)
        first = children("mcp-server-time")
        assert len(first) == 1
        kill(first)
        assert (await handle.result()).status == "completed"
        second = children("mcp-server-time")
    assert second and second != first  # a fresh server process
    for path, zone in (("t1.json", "UTC"), ("t2.json", "Asia/Tokyo")):
        data = await s3.get("switchback", f"{handle.id}/{path}")
        assert data is not None and json.loads(data)["timezone"] == zone
    tried = attempts(await handle.fetch_history(), "time__get_current_time Asia/Tokyo")
    assert tried[-1][0] == 2 and "Connection closed" in tried[-1][1]


async def test_a_server_killed_during_a_call_is_retried_on_a_new_one(
        client, task_queue, start_job, model_server, s3, mcp, tmp_path):
    marker = tmp_path / "slow.marker"
    script = bootstrap() + [
        step(call("notes__slow", seconds=120, marker=str(marker))),
        step(call("write_file", path="slow.txt", content="{{last_tool_result}}")),
    ] + [step(call("todo_complete", notes=f"t{i}")) for i in range(5)] + finish()
    config = {"tools": {"domain": ["notes.slow"], "retry": FAST_RETRY}}
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        for _ in range(600):  # the first call is under way once it wrote its marker
            if marker.exists() and marker.read_text():
                break
            await asyncio.sleep(0.1)
        busy = int(marker.read_text())
        assert busy in children(NOTES)
        kill([busy])
        assert (await handle.result()).status == "completed"
    assert await s3.get("switchback", f"{handle.id}/slow.txt") == b"slept before"
    tried = attempts(await handle.fetch_history(), "notes__slow")
    assert tried[-1][0] == 2 and "Connection closed" in tried[-1][1]


async def test_a_server_that_does_not_start_is_named(client, task_queue, start_job,
                                                     model_server, s3, git_repo, notes_http,
                                                     capsys):
    mcp = McpServers(servers_config(git_repo, notes_http, broken={
        "command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}), errlog=QUIET)
    await report_tools(mcp)  # what the worker prints at its start
    out = capsys.readouterr().out
    assert "switchback worker: MCP server 'time' ready" in out
    assert ("switchback worker: ERROR: MCP server 'broken' (stdio: "
            f"{sys.executable}) did not start: MCPError: Connection closed") in out
    config = {"tools": {"domain": ["broken.*"], "retry": FAST_RETRY}}
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await start_job(None, None, config=config, instructions="x", documents=[])
        with pytest.raises(WorkflowFailureError) as info:
            await handle.result()
    message = str(info.value.cause)
    assert "tools: MCPServerUnavailable: MCP server 'broken'" in message
    assert "did not start" in message
    error = json.loads(await s3.get("switchback", f"{handle.id}/output/error.json") or b"{}")
    assert error["code"] == "tools_unavailable" and "broken" in error["error"]
    # list_tools ran as a local activity (patch local-start): its marker holds the attempts
    assert local_attempts(await handle.fetch_history(), "list_tools") == [3]
