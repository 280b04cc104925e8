"""A job uses MCP tools end to end: a scripted model calls tools of `mcp-server-time`,
`mcp-server-git` (stdio) and the notes server (Streamable HTTP) in a tactical phase and
writes what they returned to the workspace; the finished history replays."""

from __future__ import annotations

import json

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from switchback.operate.replay import replay
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, transition

CONFIG = {"tools": {"domain": ["time.get_current_time", "git.git_log", "notes_http.*"]}}


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def tool_messages(model_server, job_id: str) -> list[str]:
    seen: dict[str, str] = {}
    for r in model_server.requests(job_id):
        for m in r["messages"]:
            if m["role"] == "tool":
                seen[m["tool_call_id"]] = m["content"]
    return list(seen.values())


def script(repo) -> list[dict]:
    return [step(call("time__get_current_time", timezone="UTC"))] + bootstrap() + [
        step(call("time__get_current_time", timezone="Europe/Berlin")),
        step(call("write_file", path="out/time.json", content="{{last_tool_result}}"),
             call("todo_complete", notes="time")),
        step(call("git__git_log", repo_path=str(repo), max_count=1)),
        step(call("write_file", path="out/git_log.txt", content="{{last_tool_result}}"),
             call("todo_complete", notes="git log")),
        step(call("notes_http__lookup", key="alpha")),
        step(call("write_file", path="out/note.txt", content="{{last_tool_result}}"),
             call("todo_complete", notes="note")),
        step(call("notes_http__big", n=9000), call("notes_http__fail", reason="boom"),
             call("notes_http__lookup", key="zeta"), call("notes_http__lookup", nope=1)),
        step(call("todo_complete", notes="errors read")),
        step(call("todo_complete", notes="done")),
    ] + finish()


async def test_a_tactical_phase_calls_mcp_tools_and_writes_their_answers(
        client, task_queue, start_job, model_server, s3, mcp, git_repo):
    async with running_worker(client, task_queue, mcp=mcp, max_cached_workflows=0):
        handle = await start_job(script(git_repo), model_server, config=CONFIG,
                                 instructions="Use the tools.", documents=[])
        assert (await handle.result()).status == "completed"

    async def text(path: str) -> str:
        data = await s3.get("switchback", f"{handle.id}/{path}")
        assert data is not None, path
        return data.decode()

    # what the servers answered, written by the model into the workspace
    assert json.loads(await text("out/time.json"))["timezone"] == "Europe/Berlin"
    assert "Add the notes readme" in await text("out/git_log.txt")
    assert await text("out/note.txt") == "Alpha is the first letter."

    # the tool set by phase: MCP tools in the tactical phase only; a call outside is refused
    reqs = model_server.requests(handle.id)
    assert "time__get_current_time" not in tool_names(reqs[0])
    tactical = tool_names(reqs[len(bootstrap()) + 1])
    assert {"time__get_current_time", "git__git_log", "notes_http__lookup", "notes_http__big",
            "notes_http__fail", "notes_http__slow", "notes_http__pid"} <= set(tactical)
    assert "git__git_status" not in tactical  # only what the config selected
    messages = tool_messages(model_server, handle.id)
    assert messages[0].startswith("Error [tool_not_allowed]: tool 'time__get_current_time'")

    # server errors and isError results are tool errors the model reads; long ones offloaded
    assert any(m.startswith("Error [mcp_tool_error]: Error executing tool fail")
               for m in messages)
    assert ("Error [mcp_tool_error]: Error executing tool lookup: no note 'zeta'; keys: alpha, "
            "omega") in messages
    assert any(m.startswith("Error [invalid_arguments]: bad arguments for "
                            "'notes_http__lookup'") and "'key' is a required property" in m
               for m in messages)
    cut = next(m for m in messages if m.startswith("0123456789"))
    assert "cut at 6000 of 9000 characters" in cut
    [offloaded] = await s3.list("switchback", f"{handle.id}/tool_outputs/")
    assert offloaded.size == 9000

    # the tools the job may use, recorded once at its start under .switchback/tools/
    [rec] = await s3.list("switchback", f"{handle.id}/.switchback/tools/")
    record = json.loads(await text(rec.key.split("/", 1)[1]))["tools"]
    assert record["time__get_current_time"]["name"] == "time.get_current_time"
    assert record["time__get_current_time"]["source"] == "mcp server time"
    assert record["git__git_log"]["tool"] == "git_log"
    assert record["read_file"]["source"] == "built-in"
    assert set(record) >= set(tactical)

    # activity summaries name the tool as the model called it, with its main argument
    history = await handle.fetch_history()
    summaries = [e.user_metadata.summary.data.decode() for e in history.events
                 if e.HasField("activity_task_scheduled_event_attributes")
                 or e.HasField("marker_recorded_event_attributes")]  # local activities too
    assert "list tools" in [json.loads(s) for s in summaries if s]
    assert any("notes_http__lookup alpha" in s for s in summaries)
    assert any("time__get_current_time Europe/Berlin" in s for s in summaries)

    [report] = await replay([history], client.data_converter)
    assert report.ok, report.detail


async def test_mcp_tools_are_found_by_tool_search(client, task_queue, start_job, model_server,
                                                  s3, mcp, git_repo):
    config = {"tools": {"domain": ["git.*"], "deferred": ["git.*"]}}
    job = [step(call("git__git_log", repo_path=str(git_repo))),
           step(call("tool_search", query="show the commit log of the repository")),
           step(call("git__git_log", repo_path=str(git_repo), max_count=1)),
           step(call("write_file", path="log.txt", content="{{last_tool_result}}")),
           ] + [step(call("todo_complete", notes=f"t{i}")) for i in range(5)]
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await start_job(bootstrap() + job + finish(), model_server, config=config,
                                 instructions="x", documents=[])
        assert (await handle.result()).status == "completed"
    reqs = model_server.requests(handle.id)
    n = len(bootstrap())
    assert "git__git_log" not in tool_names(reqs[n]) and "tool_search" in tool_names(reqs[n])
    assert "git__git_log" in tool_names(reqs[n + 2])
    messages = tool_messages(model_server, handle.id)
    assert any("[tool_not_loaded]" in m for m in messages)
    assert any(m.startswith("Loaded these tools") and "git__git_log" in m for m in messages)
    log = await s3.get("switchback", f"{handle.id}/log.txt")
    assert log is not None and b"Add the notes readme" in log


async def test_names_that_match_nothing_fail_the_job_at_its_start(
        client, task_queue, start_job, model_server, s3, mcp):
    config = {"tools": {"domain": ["time.get_current_tme", "nosuch.*", "word_cont"]}}
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await start_job(None, None, config=config, instructions="x", documents=[])
        with pytest.raises(WorkflowFailureError) as info:
            await handle.result()
    cause = info.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "SwitchbackJobFailed"
    message = str(cause)
    assert ("'time.get_current_tme': MCP server 'time' has no tool matching "
            "'get_current_tme' (it has: convert_time, get_current_time)") in message
    assert "'nosuch.*': no MCP server 'nosuch' is declared on this worker" in message
    assert "'word_cont': unknown tool on this worker; did you mean word_count" in message
    error = json.loads(await s3.get("switchback", f"{handle.id}/output/error.json") or b"{}")
    assert error["code"] == "tools_unavailable"
    assert model_server.requests(handle.id) == []  # the model was never asked


async def test_phases_whose_work_is_an_mcp_call_are_not_idle(
        client, task_queue, start_job, model_server, s3, mcp):
    """Tactical phases whose only work is an MCP tool call, which writes no workspace file,
    are work all the same: past `phase_settings.max_idle_phases` of them the job goes on to
    its end (patch work-without-files; before it, such a job ended `stuck`)."""
    def asked() -> list[dict]:
        return [step(call("time__get_current_time", timezone="UTC"),
                     call("todo_complete", notes="asked the time")) for _ in range(2)]

    script = (bootstrap(n_todos=2) + asked() + transition("Again", 2, memory="m1") + asked()
              + finish("asked the time four times"))
    config = {"tools": {"domain": ["time.get_current_time"]},
              "breakers": {"no_progress_steps": 0}, "phase_settings": {"max_idle_phases": 2}}
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await start_job(script, model_server, config=config,
                                 instructions="Ask the time.", documents=[])
        result = await handle.result()
    assert result.status == "completed", result
    assert result.phases == 5 and result.summary == "asked the time four times"
    results = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
               if m["role"] == "tool" and m["content"].startswith("{")]
    assert results and all('"timezone": "UTC"' in m for m in results), results  # answered
