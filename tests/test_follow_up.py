"""Follow-up instructions: a job that completed a turn takes its next instruction (`instruct`:
the update, the CLI, the signal the Temporal CLI and the web UI send) with its workspace
and memory kept, waits for it (status waiting_for_instructions, follow_up.wait_seconds),
survives a worker kill between turns, and ends completed when none comes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from switchback.operate.rerun import rerun
from switchback.workflows.contract import InputError, JobState, instruction
from tests import strategy_scripts as scripts
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical, transition
from tests.test_durability import wait_started, worker_process
from tests.test_rerun_and_replay_cli import starter
from tests.waits import temporal_cli, wait_state

ROOT = Path(__file__).resolve().parent.parent
REACT = {"extends": "creator", "strategy": "react", "llm": {"heartbeat_timeout_seconds": 2}}
PA = {"extends": "creator", "llm": {"heartbeat_timeout_seconds": 2}}
GAMMA = "gamma: the third letter\n"
FOLLOW_UP = "Also write notes/c.md about gamma."


def react_turns() -> list[dict]:
    return scripts.react() + [
        step(call("write_file", path="notes/c.md", content=GAMMA)),
        step(call("job_complete", summary="added notes/c.md", deliverables=["notes/c.md"],
                  confidence=0.9))]


async def test_a_react_job_takes_its_next_instruction_across_a_worker_kill(
        client, task_queue, start_job, model_server, s3, tmp_path):
    config = {**REACT, "follow_up": {"wait_seconds": 600}}
    first = worker_process(client, task_queue, tmp_path / "w1.log")
    try:
        await wait_started(tmp_path / "w1.log")
        handle = await start_job(react_turns(), model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        st = await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
        assert st.turn == 1 and st.waiting_until and st.instructions_waiting == 0
        os.killpg(first.pid, signal.SIGKILL)  # between turns
        first.wait(10)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    second = worker_process(client, task_queue, tmp_path / "w2.log")
    try:
        await wait_started(tmp_path / "w2.log")
        out = starter(client, "instruct", handle.id, FOLLOW_UP)
        assert out.returncode == 0, out.stderr
        assert "instruction queued as turn 2" in out.stdout
        st = await wait_state(handle, lambda s: s.status == "waiting_for_instructions"
                              and s.turn == 2)
        # no running turn to rewind: refused, with what to send instead
        temporal_cli(client, "workflow", "signal", "--workflow-id", handle.id, "--name",
                     "rewind", "--input", '"start over"')
        refused = await wait_state(handle, lambda s: bool(s.rejected))
        assert "rewind: turn 2 has completed and the job waits for its next instruction" in (
            refused.rejected[-1])
        await handle.cancel()  # the cancel ends the wait: the completed turn is the result
        result = await asyncio.wait_for(handle.result(), 60)
    finally:
        second.terminate()
        second.wait(10)
    assert st.deliverables.refusals == 0
    requests = model_server.requests(handle.id)
    assert len(requests) == 7
    turn2 = requests[5]["messages"]  # the conversation goes on: turn 1's calls are in it
    assert FOLLOW_UP in turn2[-1]["content"] and "turn 2" in turn2[-1]["content"]
    assert any(m.get("tool_calls") for m in turn2[:-1])
    assert await s3.get("switchback", f"{handle.id}/notes/c.md") == GAMMA.encode()
    text = (await s3.get("switchback", f"{handle.id}/instructions.md")).decode()
    assert text.startswith(scripts.INSTRUCTIONS.rstrip("\n"))
    assert text.endswith(f"\n\n## Follow-up instruction (turn 2)\n\n{FOLLOW_UP}\n")
    assert result.status == "completed" and result.summary == "added notes/c.md"
    done = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert done["status"] == "completed" and done["summary"] == "added notes/c.md"


@pytest.mark.parametrize("every_phases", [0, 1], ids=["one-run", "continued-as-new"])
async def test_an_instruction_sent_while_the_turn_runs_starts_the_next_phase_alternation_turn(
        client, task_queue, start_job, model_server, s3, every_phases):
    """The Temporal CLI's signal, sent during turn 1: the job goes on with it when turn 1
    completes (follow_up.wait_seconds 0: no waiting after turn 2) - also when the job
    continues as new at every phase, the queued instruction carried to the next run."""
    turn1 = bootstrap("Phase A", 2) + tactical(2, "a") + finish("turn one", ["work/a_1.md"])
    turn2 = transition("Gamma", 2) + tactical(2, "g") + finish("turn two", ["work/g_1.md"])
    turn1[2] = {**turn1[2], "latency_ms": 1500}  # the signal lands during turn 1
    config = {**PA, "continue_as_new": {"every_phases": every_phases}} if every_phases else PA
    async with running_worker(client, task_queue):
        handle = await start_job(turn1 + turn2, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_state(handle, lambda s: s.steps_total >= 1)
        temporal_cli(client, "workflow", "signal", "--workflow-id", handle.id, "--name",
                     "instruct", "--input", json.dumps(FOLLOW_UP))
        st = await wait_state(handle, lambda s: s.instructions_waiting == 1)
        assert st.turn == 1 and st.status == "running"
        result = await handle.result()
        st = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and result.summary == "turn two"
    assert st.turn == 2 and st.instructions_waiting == 0
    assert (st.run > 1) == bool(every_phases)  # each run after a phase start
    variants = [p["variant"] for p in st.phases]
    assert variants[-3:] == ["follow_up", "work", "transition"]
    requests = model_server.requests(handle.id)
    assert len(requests) == len(turn1) + len(turn2)
    follow = requests[len(turn1)]["messages"]
    assert follow[0]["role"] == "system"  # a strategic phase: the instruction in its prompt
    assert FOLLOW_UP in follow[0]["content"] and "turn 2" in follow[0]["content"]
    assert FOLLOW_UP in follow[0]["content"].split("## The task (instructions.md)")[1]
    for path in ("work/a_1.md", "work/g_1.md", "work/g_2.md"):
        assert await s3.get("switchback", f"{handle.id}/{path}") is not None
    archived = await s3.get("switchback", f"{handle.id}/archive/phase_3.yaml")
    assert archived is not None and b"status: completed" in archived


async def test_a_rerun_from_a_follow_up_phase_is_that_turn(client, task_queue, start_job,
                                                         model_server, s3):
    """`starter.py rerun --from-phase N` of a phase of turn 2: the new job is in turn 2 (its
    snapshot carries the turn and what the turn wrote), every answer replayed."""
    turn1 = bootstrap("Phase A", 2) + tactical(2, "a") + finish("turn one", ["work/a_1.md"])
    turn2 = transition("Gamma", 2) + tactical(2, "g") + finish("turn two", ["work/g_1.md"])
    async with running_worker(client, task_queue):
        old = await start_job(turn1 + turn2, model_server, config=PA, documents=[],
                              instructions=scripts.INSTRUCTIONS)
        await old.signal("instruct", FOLLOW_UP)  # queued: taken when turn 1 completes
        assert (await old.result()).summary == "turn two"
        st = await old.query("state", result_type=JobState)
        first = next(p["number"] for p in st.phases if p["variant"] == "follow_up")
        new_id = f"{old.id}-rerun"
        handle = await rerun(client, s3, "switchback", old.id, new_id, first, task_queue, True)
        result = await handle.result()
        again = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and result.summary == "turn two"
    assert again.turn == 2 and model_server.requests(new_id) == []


async def test_without_an_instruction_the_job_ends_completed_and_takes_no_more(
        client, task_queue, start_job, model_server, s3):
    config = {**REACT, "follow_up": {"wait_seconds": 8, "max_turns": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(scripts.react(), model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
        meta = await handle.query("__temporal_workflow_metadata")  # what the web UI offers
        assert "instruct" in {d.name for d in meta.definition.update_definitions}
        (custom,) = [d for d in meta.definition.signal_definitions if not d.name]
        assert "instruct (Custom, name it instruct)" in custom.description
        assert "waiting for the next instruction" in meta.current_details
        for bad, why in (("   ", "non-empty string"), ({"text": "x"}, 'unknown key "text"')):
            with pytest.raises(WorkflowUpdateFailedError) as e:
                await handle.execute_update("instruct", bad, result_type=str)
            assert why in str(e.value.cause)
        temporal_cli(client, "workflow", "signal", "--workflow-id", handle.id, "--name",
                     "instruct", "--input", '""')
        st = await wait_state(handle, lambda s: bool(s.rejected))
        assert "instruct: the instruction must be a non-empty string" in st.rejected[-1]
        result = await handle.result()
        st = await handle.query("state", result_type=JobState)
        with pytest.raises((WorkflowUpdateFailedError, RPCError)):
            await handle.execute_update("instruct", FOLLOW_UP, result_type=str)
    assert result.status == "completed" and st.status == "completed" and st.turn == 1
    assert not st.waiting_until
    assert len(model_server.requests(handle.id)) == len(scripts.react())


async def test_instructions_beyond_max_turns_are_refused(client, task_queue, start_job,
                                                         model_server):
    config = {**REACT, "follow_up": {"wait_seconds": 600, "max_turns": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(react_turns(), model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
        answer = await handle.execute_update("instruct", {"instruction": FOLLOW_UP},
                                             result_type=str)
        assert answer.startswith("instruction queued as turn 2")
        with pytest.raises(WorkflowUpdateFailedError) as e:
            await handle.execute_update("instruct", "one more", result_type=str)
        assert "follow_up.max_turns=2" in str(e.value.cause)
        result = await handle.result()  # the last turn waits for no instruction
        st = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and result.summary == "added notes/c.md"
    assert st.turn == 2 and not st.waiting_until


async def test_a_follow_up_turn_names_only_the_files_it_wrote(client, task_queue, start_job,
                                                              model_server, s3):
    """Turn 1's files are there, so they would pass the existence check: a turn-2
    job_complete naming one it did not write is refused (it shows no work of this turn);
    the turn writes its file and names that one, and the job completes."""
    config = {**REACT, "follow_up": {"wait_seconds": 600, "max_turns": 2}}
    turn2 = [step(call("job_complete", summary="done already", deliverables=["notes/a.md"],
                       confidence=0.9)),
             step(call("write_file", path="notes/c.md", content=GAMMA)),
             step(call("job_complete", summary="added notes/c.md",
                       deliverables=["notes/*.md"], confidence=0.9))]
    async with running_worker(client, task_queue):
        handle = await start_job(scripts.react() + turn2, model_server, config=config,
                                 documents=[], instructions=scripts.INSTRUCTIONS)
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
        await handle.execute_update("instruct", FOLLOW_UP, result_type=str)
        result = await handle.result()
        st = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and result.summary == "added notes/c.md"
    assert st.turn == 2 and st.deliverables.refusals == 1
    refused = model_server.requests(handle.id)[len(scripts.react()) + 1]["messages"][-1]
    assert refused["role"] == "tool" and "job_complete refused" in refused["content"]
    assert "notes/a.md was not written in this turn (turn 2)" in refused["content"]
    assert await s3.get("switchback", f"{handle.id}/notes/c.md") == GAMMA.encode()


async def test_a_follow_up_job_complete_let_through_on_earlier_files_ends_stuck(
        client, task_queue, start_job, model_server):
    """Its refusals used up, a job_complete naming only turn 1's files is let through and
    verified whole: the turn shows no work of its own, so the job ends `stuck`, never
    `completed`."""
    config = {**REACT, "completion": {"max_refusals": 1},
              "follow_up": {"wait_seconds": 600, "max_turns": 2}}
    stale = step(call("job_complete", summary="done already", deliverables=["notes/a.md"],
                      confidence=0.9))
    async with running_worker(client, task_queue):
        handle = await start_job(scripts.react() + [stale, stale], model_server, config=config,
                                 documents=[], instructions=scripts.INSTRUCTIONS)
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
        await handle.execute_update("instruct", FOLLOW_UP, result_type=str)
        result = await handle.result()
    assert result.status == "stuck", result
    assert any("notes/a.md was not written in this turn (turn 2)" in m for m in result.missing)


async def test_a_plan_revise_execute_follow_up_turn_completes_with_its_own_files(
        client, task_queue, start_job, model_server, s3):
    """The strategy's own result names every done step's files, turn 1's too: the turn's
    result keeps only the files it wrote, and the job completes (not `stuck` on turn 1's)."""
    config = {"extends": "creator", "strategy": "plan_revise_execute",
              "llm": {"heartbeat_timeout_seconds": 2},
              "follow_up": {"wait_seconds": 600, "max_turns": 2}}
    turn2 = [step(call("submit_plan", steps=[{"id": 5, "name": "Write notes/c.md",
                                               "detail": "gamma"}], rationale="one more")),
             step(call("submit_evaluation", score=0.9, reasons="complete")),
             step(call("write_file", path="notes/c.md", content=GAMMA)),
             step(call("step_result", status="done", summary="notes/c.md: gamma",
                       files=["notes/c.md"]))]
    script = scripts.plan_revise_execute(revise=False, fail_step=False) + turn2
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
        await handle.execute_update("instruct", FOLLOW_UP, result_type=str)
        result = await handle.result()
    assert result.status == "completed", result
    assert result.deliverables == ["notes/c.md"] and result.verified == ["notes/c.md"]
    assert await s3.get("switchback", f"{handle.id}/notes/c.md") == GAMMA.encode()


async def test_a_follow_up_instruction_adds_tools(client, task_queue, start_job, model_server):
    """`instruct` with "tools": the next turn lists them with the job's own (a record of its
    own) and the model calls them; a name that resolves to nothing leaves the tools as they
    were, and `rejected` says so."""
    config = {**REACT, "follow_up": {"wait_seconds": 600, "max_turns": 3}}
    count = call("word_count", path="notes/a.md")
    script = scripts.react() + [step(count), step(call(  # turn 2: the tool it was given
        "job_complete", summary="counted", deliverables=[], confidence=0.9)),
        step(call("job_complete", summary="turn 3", deliverables=[], confidence=0.9))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions")
        answer = await handle.execute_update(
            "instruct", {"instruction": "Count the words of notes/a.md.",
                         "tools": ["word_count"]}, result_type=str)
        assert answer.endswith("with 1 more tools")
        await wait_state(handle, lambda s: s.status == "waiting_for_instructions"
                         and s.turn == 2)
        await handle.execute_update("instruct", {"instruction": "And more.",
                                                 "tools": ["no_such_tool"]}, result_type=str)
        result = await handle.result()
        st = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and result.summary == "turn 3"
    requests = model_server.requests(handle.id)
    offered = [{t["function"]["name"] for t in r["tools"]} for r in requests]
    assert "word_count" not in offered[0] and "word_count" in offered[len(scripts.react())]
    counted = requests[len(scripts.react()) + 1]["messages"][-1]
    assert counted["role"] == "tool" and "Error" not in counted["content"], counted
    assert "word_count" in offered[-1]  # turn 3 keeps the tools turn 2 added
    assert any("turn 3 runs without the tools it asked for (no_such_tool)" in r
               for r in st.rejected), st.rejected


def test_the_instruction_is_checked_and_an_ended_job_takes_none():
    from switchback.workflows.steering import MAX_QUEUED_INSTRUCTIONS, Steering

    s = Steering()
    assert s.check_instruction("more", None, False) == ("more", [])  # config not loaded yet
    assert s.check_instruction({"instruction": "more", "tools": ["notes.*", "cd", "cd"]}, 5,
                               False) == ("more", ["notes.*", "cd"])
    assert s.check_instruction({"instruction": "x", "tools": ["[!a]*", "git.*"]}, 5,
                               False)[1] == ["[!a]*", "git.*"]  # globs as tools.domain has them
    for bad in ({"instruction": "x", "tools": "cd"}, {"instruction": "x", "tools": ["a b"]},
                {"instruction": "x", "tools": ["../x"]}, {"instruction": "x", "tools": [1]}):
        with pytest.raises(ApplicationError, match="'tools' must be a list of at most 50"):
            s.check_instruction(bad, 5, False)
    with pytest.raises(ApplicationError, match="the job has ended"):
        s.check_instruction("more", 20, True)
    s.instructions = ["x"] * MAX_QUEUED_INSTRUCTIONS
    with pytest.raises(ApplicationError, match="already wait for their turn"):
        s.check_instruction("more", 20, False)


def test_follow_ups_survive_a_long_task_in_the_prompt():
    from switchback.activities.model.call_parts import cut_instructions

    task = "# Task\n\n" + "words " * 3000
    text = f"{task}\n\n## Follow-up instruction (turn 2)\n\nnow add c.md\n".strip()
    shown = cut_instructions(text, 6000)
    assert len(shown) < 6200 and shown.startswith("# Task")
    assert shown.endswith("## Follow-up instruction (turn 2)\n\nnow add c.md")
    assert "[... instructions.md has" in shown
    assert cut_instructions(task.strip(), 6000) == (  # no follow-up: as before
        f"{task.strip()[:6000]}\n\n[... instructions.md has {len(task.strip()):,} characters; "
        "read_file it from offset 6000 for the rest]")


def test_the_instruction_is_checked():
    assert instruction("  do more  ") == "do more"
    assert instruction({"instruction": "x"}) == "x"
    for bad in ("", 5, None, {"instruction": 3}, "x" * 20_001):
        with pytest.raises(InputError):
            instruction(bad)


async def test_an_append_is_written_once(s3):
    from switchback.activities.storage.workspace import WorkspaceActivities
    from switchback.workflows.contract import WorkspaceRef, WriteOutputRequest

    ws = WorkspaceRef(bucket="switchback", job_id=f"append-{os.getpid()}")
    await s3.put("switchback", f"{ws.job_id}/instructions.md", b"# Task\n", "text/markdown")
    acts = WorkspaceActivities(s3)
    req = WriteOutputRequest(workspace=ws, path="instructions.md", data={}, append=True,
                             text="\n\n## Follow-up instruction (turn 2)\n\nmore\n")
    for _ in range(2):  # a retried attempt finds its text there
        await acts.write_output(req)
    got = (await s3.get("switchback", f"{ws.job_id}/instructions.md")).decode()
    assert got == "# Task\n\n\n## Follow-up instruction (turn 2)\n\nmore\n"
