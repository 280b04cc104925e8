"""What a phase is told of the deliverables, and how a job_complete is held to them, for
every job (docs/completion.md): a transition or rewind phase's first message says whether
the deliverables the job is held to are there; a job_complete whose deliverables are not
there is refused with what is missing until they are."""

from __future__ import annotations

import asyncio

from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical, transition
from tests.test_bad_model_input import tool_messages


async def run(client, task_queue, start_job, model_server, script, config):
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 150)
    return handle, result, tool_messages(model_server, handle.id)


def done(summary: str = "done") -> dict:
    return step(call("job_complete", summary=summary, deliverables=["out.md"], confidence=0.9,
                     notes="n"))


async def test_job_complete_is_refused_until_the_deliverables_are_there(
        client, task_queue, start_job, model_server, s3):
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0},
              "deliverables": ["work/a_1.md", "out.md"]}
    script = bootstrap() + tactical(5) + finish()[:2] + [
        done("first try"),  # out.md missing: refused
        step(call("write_file", path="out.md", content="")),
        done("second try"),  # out.md empty: refused
        step(call("write_file", path="out.md", content="# Out\n")),
        done("all there")]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed" and result.summary == "all there", result
    assert result.notes == "n"
    assert msgs.count("Error [job_incomplete]: job_complete refused (1 of 3): the deliverables "
                      "are not there: out.md does not exist. Do the work that makes them so "
                      "with the tools. Then call job_complete again (name in `deliverables` "
                      "the files the job wrote).") == 1
    assert any(m.startswith("Error [job_incomplete]: job_complete refused (2 of 3): the "
                            "deliverables are not there: out.md is empty") for m in msgs)
    completion = await s3.get("switchback", f"{handle.id}/output/completion.json")
    assert b'"all there"' in completion


async def test_a_transition_phase_says_whether_the_deliverables_are_in_place(
        client, task_queue, start_job, model_server):
    """Its files written, a model may plan the ritual's todos again instead of calling
    job_complete: a transition phase's first message says whether they are there."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0},
              "deliverables": ["work/a_1.md"]}
    script = bootstrap() + tactical(5) + finish()
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed"
    kickoff = next(m["content"] for r in model_server.requests(handle.id)
                   for m in r["messages"][1:2] if "Phase 3 (strategic) begins" in m["content"])
    assert ("Every deliverable declared for this job is there (work/a_1.md). If nothing else "
            "is left to do, call job_complete now." in kickoff)
    missing = {**config, "deliverables": ["out.md"]}
    script = bootstrap() + tactical(5) + finish()[:2] + [
        step(call("write_file", path="out.md", content="# Out\n")), done()]
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, missing)
    kickoff = next(m["content"] for r in model_server.requests(handle.id)
                   for m in r["messages"][1:2] if "Phase 3 (strategic) begins" in m["content"])
    assert ("\n\nThe deliverables are not all there yet: out.md does not exist. The next todos "
            "are the work that makes them so.\n\n" in kickoff)
    assert result.status == "completed"


async def test_a_rewind_phase_says_what_is_missing(client, task_queue, start_job,
                                                   model_server):
    """A rewind phase's first message says which deliverables are missing, as a transition
    phase's does."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0},
              "deliverables": ["out.md"]}
    script = bootstrap() + [step(call("todo_rewind", issue="wrong plan"))] + transition(
        "Revised") + tactical(5, "r") + finish()[:2] + [
        step(call("write_file", path="out.md", content="# Out\n")), done()]
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    kickoff = next(m["content"] for r in model_server.requests(handle.id)
                   for m in r["messages"][1:2] if "Phase 3 (strategic) begins" in m["content"])
    assert "Rewind" in kickoff and "The deliverables are not all there yet: out.md does not " \
        "exist. The next todos are the work that makes them so." in kickoff
