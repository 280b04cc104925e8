"""Verified completion over a corpus of small jobs (tests/completion_corpus.py), each under
react, phase_alternation, plan_revise_execute and auto (routed to react) with a scripted
model: every job ends as it must - `completed` exactly when its deliverables are there (0
false completions, 0 missed completions), with the verified files in its result."""

from __future__ import annotations

import json

import pytest

from switchback.activities.tools.mcp_config import parse
from switchback.activities.tools.mcp_sessions import McpServers
from switchback.devstack.processes import venv_bin
from switchback.workflows.contract import JobState
from tests.completion_corpus import (
    JOBS,
    Job,
    auto,
    phase_alternation,
    plan_revise_execute,
    react,
)
from tests.conftest import running_worker

SCRIPTS = {"react": react, "phase_alternation": phase_alternation,
           "plan_revise_execute": plan_revise_execute, "auto": auto}


@pytest.mark.parametrize("strategy", sorted(SCRIPTS))
@pytest.mark.parametrize("job", JOBS, ids=[j.name for j in JOBS])
async def test_the_job_ends_as_its_deliverables_say(job: Job, strategy: str, client, task_queue,
                                                    start_job, model_server, s3):
    config = {"extends": "defaults", "strategy": strategy, "deliverables": job.deliverables,
              "tools": {"domain": ["word_*"] + (["time.get_current_time"] if job.mcp else [])},
              "llm": {"heartbeat_timeout_seconds": 2}, "auto": {"routes": {"C": "react"}}}
    mcp = McpServers(parse({"servers": {"time": {"command": venv_bin("mcp-server-time")}}},
                           "corpus")) if job.mcp else None
    async with running_worker(client, task_queue, **({"mcp": mcp} if mcp else {})):
        handle = await start_job(SCRIPTS[strategy](job), model_server, config=config,
                                 instructions=f"The {job.name} job.", documents=[],
                                 deliverables=job.input_deliverables)
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == job.expect, (result.summary, result.notes)
    assert sorted(result.verified) == sorted(job.delivered)
    assert result.answer_only == job.answer_only
    done = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert done["status"] == job.expect
    if job.expect == "stuck":
        assert result.missing and "not there" in result.notes
    asked = [m for r in model_server.requests(handle.id) for m in r["messages"]
             if m["role"] == "tool"]
    refused = [m for m in asked if "job_incomplete" in m["content"]
               or "claim_unseen" in m["content"]]
    if strategy == "plan_revise_execute":  # no job_complete: the plan's end is checked
        assert not refused
    elif job.ending == "repeated":  # one refusal, the other claims of the answer not run
        once = {m["tool_call_id"]: m["content"] for m in asked}  # (each request has them all)
        assert [c[:54] for c in once.values() if "job_incomplete" in c] == [
            "Error [job_incomplete]: job_complete refused (1 of 3):"]
        assert len([c for c in once.values() if c.startswith("Error [claimed_before]")]) == 3
    elif job.ending == "early" or job.expect == "stuck":
        assert refused, "a completion without its deliverables must be refused"
    elif job.ending == "blind":  # once per turn: the claim made again is taken
        assert [m["content"][:60] for m in refused] == [
            "Error [claim_unseen]: job_complete not taken: in the same an"]
    else:
        assert not refused
    if job.ending == "never":
        assert result.completed_by in ("workflow", "model")
    if job.plan_deliverables and strategy == "phase_alternation":
        assert state.deliverables.by_model == job.plan_deliverables
    assert not [m for m in asked if "plan_repeats" in m["content"]
                or "todo_not_done" in m["content"]], "an ordinary plan was refused"
