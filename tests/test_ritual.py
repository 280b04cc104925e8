"""The ritual holds for a small model: each failure seen when Qwen2.5-Coder-1.5B drove the phase
machine (issue #17), replayed with the scripted model in llama-server's shapes, now meets a
rule - and the job goes on (or stops with the reason).

- a stale todos.yaml after a rejected todo_write is refused by the gate;
- a plan that copies the predefined bootstrap todos, or a done phase's todos, is refused;
- the task reaches the model in the system prompt; a predefined todo whose file did not
  change is not complete; one todo_complete per turn; job_complete is never lost;
- idle tactical phases and rewinds stop the job as stuck; rewind prompts name the archive.
"""

from __future__ import annotations

import asyncio
import json

from switchback.activities.config_files import load_config
from tests.conftest import running_worker
from tests.llama import answer
from tests.scripts import (
    PROMPT_COPY,
    bootstrap,
    call,
    finish,
    step,
    tactical,
    todos,
    transition,
)
from tests.test_bad_model_input import tool_messages

CONFIG = {"extends": "creator", "breakers": {"no_progress_steps": 0}}


async def run(client, task_queue, start_job, model_server, script, config=None, **inp):
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config or CONFIG,
                                 **{"instructions": "x", "documents": [], **inp})
        result = await asyncio.wait_for(handle.result(), 150)
    return handle, result, tool_messages(model_server, handle.id)


async def test_a_stale_todos_yaml_is_refused_after_a_rejected_todo_write(
        client, task_queue, start_job, model_server):
    """The issue's run: todo_write rejected, then todo_complete - the file phase 1 left passed
    the gate four times. Now the gate says whose it is; the model writes this phase's."""
    stale = transition("Phase 2")[:3] + [
        step(call("todo_write", phase="Phase 2", description="d", todos=[])),  # 0: rejected
        step(call("todo_complete", notes="todos written")),
        step(call("todo_write", phase="Phase 2", description="d", todos=todos(2, "Next"))),
        step(call("todo_complete", notes="todos written")),
    ]
    script = bootstrap("Phase 1") + tactical(5) + stale + tactical(2, "b") + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed" and result.phases == 5
    assert any(m.startswith("Error [invalid_todos]") for m in msgs)
    assert any("Phase transition rejected: todos.yaml is left over from phase 1 (todo_write "
               "wrote it then), it is not this phase's plan. Call todo_write" in m for m in msgs)


async def test_a_plan_that_copies_the_predefined_todos_is_refused(client, task_queue, start_job,
                                                                  model_server, s3):
    """The bootstrap todos copied back as the tactical plan, padded (the issue's run re-ran
    them in every tactical phase): todo_write itself refuses it (patch todo-write-checked; the
    third round's model wrote the copy again and again and never reached the gate), so the
    gate has no todos.yaml to take; then a one-todo plan, which min_todos 1 accepts."""
    boot = [t if isinstance(t, str) else t.content
            for t in load_config("defaults", policy=False).strategic_todos.bootstrap]
    copied = [{"id": 1, "content": boot[0]},
              {"id": 2, "content": "2. " + boot[1]},
              {"id": 3, "content": "Write notes/a.md"}]
    script = bootstrap()[:-2] + [
        step(call("todo_write", phase="P", description="d", todos=copied)),
        step(call("todo_complete", notes="todos")),
        step(call("todo_write", phase="P", description="d",
                  todos=[{"id": 1, "content": "Write work/a_1.md"}])),
        step(call("todo_complete", notes="todos")),
    ] + tactical(1) + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed"
    assert any(m.startswith("Error [plan_repeats]: todos.yaml was not written: the plan "
                            "repeats the predefined bootstrap todos of a strategic phase (2 of 3 "
                            "todos") for m in msgs), "\n".join(msgs)
    assert "Error [transition_rejected]: Phase transition rejected: todos.yaml not found. " \
        "Create it with todo_write. The todo stays open: fix todos.yaml (use todo_write), " \
        "then call todo_complete again." in msgs
    assert await s3.get("switchback", f"{handle.id}/work/a_1.md") == b"result a 1\n"


async def test_a_plan_that_copies_the_strategic_prompt_is_refused(client, task_queue, start_job,
                                                                   model_server, s3):
    """BFCL's miss_param_3 under phase_alternation: the 1.5B model planned the strategic
    prompt's five bullets, numbered, and its tactical phase "did" them. With the patch
    plan-not-the-prompt todo_write refuses that plan (no profile needed: the copies are
    exact, the numbers aside), the gate finds no todos.yaml, and the next plan runs."""
    script = bootstrap()[:-2] + [
        step(call("todo_write", phase="P", description="d",
                  todos=[{"id": i, "content": c} for i, c in enumerate(PROMPT_COPY, 1)])),
        step(call("todo_complete", notes="todos")),
        step(call("todo_write", phase="P", description="d",
                  todos=[{"id": 1, "content": "Write work/a_1.md"}])),
        step(call("todo_complete", notes="todos")),
    ] + tactical(1) + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed", result
    assert any(m.startswith("Error [plan_repeats]: todos.yaml was not written: the plan "
                            "repeats the strategic phase's own instructions (its system prompt) "
                            "(5 of 5 todos") for m in msgs), "\n".join(msgs)
    archived = (await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml")).decode()
    assert "Write work/a_1.md" in archived and "Explore the workspace" not in archived
    assert await s3.get("switchback", f"{handle.id}/work/a_1.md") == b"result a 1\n"


async def test_a_tactical_phase_without_file_tools_works_with_the_domain_only(
        client, task_queue, start_job, model_server, s3):
    """phase_settings.tactical_workspace: []: the strategic phases write the plan, the
    tactical phase has no file tool (a write_file there is refused, never run) and its system prompt
    (tactical_actions.md) says its results are what its tools do."""
    script = bootstrap(n_todos=1) + [
        step(call("write_file", path="work/a_1.md", content="x\n")),  # not in the set
        step(call("todo_complete", notes="nothing to write here")),
    ] + finish()
    config = {**CONFIG, "phase_settings": {"tactical_workspace": []}}
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script,
                                     config)
    assert result.status == "completed", result
    assert await s3.get("switchback", f"{handle.id}/work/a_1.md") is None
    assert any("write_file" in m and m.startswith("Error [") for m in msgs), msgs
    systems = [r["messages"][0]["content"] for r in model_server.requests(handle.id)]
    tactical = [p for p in systems if p.startswith("You are in TACTICAL MODE")]
    assert tactical and all("You have no tool that writes workspace files" in p
                            for p in tactical)
    assert all("write_file" not in p.split("## The task")[0] for p in tactical)
    assert any("write_file" in p for p in systems if p.startswith("You are in STRATEGIC"))


async def test_the_task_is_in_the_prompt_and_cut_to_its_bound(client, task_queue, start_job,
                                                              model_server):
    task = "# Notes\nWrite notes/a.md.\n" + "More detail. " * 400
    config = {**CONFIG, "limits": {"instructions_max_chars": 1000}}
    handle, result, _ = await run(client, task_queue, start_job, model_server,
                                  bootstrap() + tactical(5) + finish(), config,
                                  instructions=task)
    assert result.status == "completed"
    first = model_server.requests(handle.id)[0]
    system = first["messages"][0]["content"]
    assert "## The task (instructions.md)\n# Notes\nWrite notes/a.md." in system
    assert (f"[... instructions.md has {len(task.strip()):,} characters; read_file it from "
            "offset 1000 for the rest]") in system
    assert "{{instructions}}" not in system


async def test_a_predefined_todo_is_not_done_until_its_file_changed(client, task_queue,
                                                                    start_job, model_server,
                                                                    s3):
    """'Populate workspace.md' completed with workspace.md untouched (the issue: main_plan.md
    first written in phase 9): refused, saying what is missing. A turn that writes the file
    completes the todo without todo_complete (the eval's 1.5B model, only reminded, rewrote
    workspace.md five times in a row), and the model is told what comes next."""
    script = [step(call("list_files")),
              step(call("todo_complete", notes="explored")),  # workspace.md untouched
              step(call("write_file", path="workspace.md", content="# Workspace\n\ntask: x\n")),
              step(call("write_file", path="main_plan.md", content="# Plan\n\n- a\n")),
              step(call("todo_complete", notes="divided"))] + bootstrap()[5:] + \
        tactical(5) + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed" and result.phases == 3, result
    assert ("Error [todo_not_done]: Todo 1 is not done: workspace.md has not changed since "
            "this phase began. Do it first (write_file workspace.md with what the todo asks "
            "for), then call todo_complete.") in msgs
    users = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
             if m["role"] == "user"]
    done = "The files that todo asks for are written, so the workflow marked it done. "
    assert f"{done}Todo 1 done. 3 remaining. Next: 2. Write main_plan.md" in " ".join(users)
    assert f"{done}Todo 2 done. 2 remaining. Next: 3. Divide the plan" in " ".join(users)


async def test_a_strategic_todo_that_asks_for_the_plan_gets_no_deliverable_written(
        client, task_queue, start_job, model_server, s3):
    """Eval round 9 (and rounds 4, 6, 7): asked for main_plan.md ("the deliverables the task
    asks for"), the 1.5B model wrote output/summary.md instead, fifteen times in a row, and
    todo 2 was refused each time until the breaker tripped. Now the off-todo write is refused
    before it runs, naming the file to write; memory and plan files stay writable together,
    and a tactical phase writes the task's files as before."""
    summary = call("write_file", path="output/summary.md", content="# Summary\n\n- apples\n")
    script = [step(call("write_file", path="workspace.md", content="# Workspace\n\nx\n")),
              step(summary),  # refused: task 2 asks for main_plan.md
              step(call("write_file", path="./main_plan.md", content="# Plan\n\n- a\n"),
                   call("write_file", path="workspace.md", content="# Workspace\n\ny\n"))
              ] + bootstrap()[4:] + [step(summary)] + tactical(4) + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed" and result.phases == 3, result
    assert msgs.count(
        "Error [not_this_todo]: output/summary.md was not written: task 2 asks for main_plan.md,"
        " and a strategic phase writes only its plan and memory (the task's files are written "
        "by a tactical phase, from the todos of todo_write). Call write_file with path "
        "main_plan.md now, with what task 2 asks for.") == 1
    assert await s3.get("switchback", f"{handle.id}/output/summary.md") == \
        b"# Summary\n\n- apples\n"  # by the tactical phase


async def test_a_done_todos_file_is_not_rewritten_while_the_plan_is_asked_for(
        client, task_queue, start_job, model_server, s3):
    """Asked for main_plan.md, a rewrite of workspace.md (the first todo, done) is refused,
    and so is the todo_complete while main_plan.md is missing; a turn that writes
    main_plan.md may still update the memory."""
    memory = call("write_file", path="workspace.md", content="# Workspace\n\nagain\n")
    script = [step(call("write_file", path="workspace.md", content="# Workspace\n\nx\n")),
              step(memory),  # refused: task 1 is done, task 2 asks for main_plan.md
              step(call("todo_complete", notes="plan")),  # refused: main_plan.md missing
              step(call("write_file", path="main_plan.md", content="# Plan\n\n- a\n"),
                   call("write_file", path="workspace.md", content="# Workspace\n\nboth\n"))
              ] + bootstrap()[4:] + tactical(5) + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed", result
    assert msgs.count(
        "Error [not_this_todo]: workspace.md was not written: task 2 asks for main_plan.md, and "
        "workspace.md was done by an earlier task of this phase. Call write_file with path "
        "main_plan.md now, with what task 2 asks for.") == 1
    assert msgs.count(
        "Error [todo_not_done]: Todo 2 is not done: main_plan.md does not exist. Do it first "
        "(write_file main_plan.md with what the todo asks for), then call todo_complete.") == 1
    assert sum(m.startswith("Error [") for m in msgs) == 2


async def test_a_strategic_phase_starts_with_what_the_phase_before_did(
        client, task_queue, start_job, model_server):
    """The eval's 1.5B model read archive/phase_2.yaml over and over in the transition phase:
    the phase's first message now says what the phase before did, todos, notes and files."""
    handle, result, _ = await run(client, task_queue, start_job, model_server,
                                  bootstrap() + tactical(5) + finish())
    assert result.status == "completed"
    first = [r for r in model_server.requests(handle.id)
             if "Phase 3 (strategic) begins" in r["messages"][1]["content"]][0]
    kickoff = first["messages"][1]["content"]
    assert ("What phase 2 did (completed):\n- [x] 1. Task 1 - did a 1\n- [x] 2. Task 2 - did a 2"
            in kickoff)
    assert ("Files it wrote: work/a_1.md, work/a_2.md, work/a_3.md, work/a_4.md, "
            "work/a_5.md." in kickoff)
    assert "{{previous}}" not in kickoff
    phase1 = model_server.requests(handle.id)[0]["messages"][1]["content"]
    assert "What phase" not in phase1


async def test_a_runaway_turn_completes_one_todo(client, task_queue, start_job, model_server,
                                                 s3):
    """A turn of many calls, mostly todo_complete (the issue: turns of 31 and 27 calls, 71 of
    122 calls todo_complete): one takes effect, the others say why not."""
    runaway = answer([("write_file", {"path": "work/a_1.md", "content": "result a 1\n"})]
                     + [("todo_complete", {"notes": f"done {i}"}) for i in range(6)], seed=7)
    script = bootstrap() + [runaway] + tactical(5)[1:] + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed"
    assert sum(m.startswith("Error [one_todo_per_turn]: only 1 todo_complete takes effect per "
                            "turn") for m in msgs) == 5
    state_phase = [r for r in model_server.requests(handle.id)
                   if "Progress: 1/5 tasks complete" in r["messages"][-1]["content"]]
    assert state_phase  # after the runaway turn: 1 of 5, not 5 of 5


async def test_job_complete_is_never_lost_to_call_ordering(client, task_queue, start_job,
                                                           model_server, s3):
    """The issue's run: the only job_complete came after a todo_complete that ended the phase,
    and was skipped ("an earlier call in this turn ended the phase")."""
    last = answer([("todo_write", {"phase": "More", "description": "d",
                                   "todos": [{"id": 1, "content": "Polish"}]}),
                   ("todo_complete", {"notes": "todos written"}),
                   ("job_complete", {"summary": "all done", "deliverables": ["work/a_1.md"],
                                     "confidence": 0.8, "notes": ""})], seed=8)
    script = bootstrap() + tactical(5) + transition("Next")[:3] + [last]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script)
    assert result.status == "completed" and result.summary == "all done"
    assert result.phases == 3  # the todo_complete that would have started phase 4 did not run
    assert await s3.get("switchback", f"{handle.id}/archive/phase_4.yaml") is None


async def test_idle_tactical_phases_stop_the_job(client, task_queue, start_job, model_server, s3):
    """Tactical phases that only call todo_complete (no file changed): after
    phase_settings.max_idle_phases of them the job stops as stuck, saying why."""
    idle = [step(call("todo_complete", notes="done")) for _ in range(2)]
    script = (bootstrap(n_todos=2) + idle + transition("Again", 2, memory="m1") + idle
              + transition("More", 2, memory="m2"))
    config = {**CONFIG, "breakers": {"no_progress_steps": 0},
              "phase_settings": {"max_idle_phases": 2}}
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "stuck"
    assert result.summary.startswith("2 tactical phases in a row changed no file besides the "
                                     "plan and called no tool of the task "
                                     "(phase_settings.max_idle_phases=2)")
    trip = json.loads(await s3.get("switchback",
                                   f"{handle.id}/output/breakers/phase_loop_4.json"))
    assert trip["breaker"] == "phase_loop" and trip["action"] == "stop"


async def test_calls_of_a_tool_of_the_task_are_work_without_files(
        client, task_queue, start_job, model_server, s3):
    """Tactical phases whose work is a call of a tool of the task that writes no file (an
    MCP server's, a service's) are not idle: the job goes on to its end (before patch
    work-without-files, max_idle_phases of them ended it `stuck`)."""
    busy = [step(call("word_count", path="instructions.md"), call("todo_complete",
                                                                  notes="counted"))] * 2
    script = (bootstrap(n_todos=2) + busy + transition("Again", 2, memory="m1") + busy
              + finish("counted twice"))
    config = {**CONFIG, "tools": {"domain": ["word_count"]},
              "phase_settings": {"max_idle_phases": 2}}
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    assert result.summary == "counted twice" and result.phases == 5
    assert await s3.get("switchback", f"{handle.id}/output/breakers/phase_loop_4.json") is None


async def test_rewinds_are_capped_and_name_the_archive(client, task_queue, start_job,
                                                       model_server, s3):
    rewind = [step(call("todo_rewind", issue="this cannot work"))]
    script = (bootstrap(n_todos=2) + [tactical(2)[0]] + rewind
              + transition("Revised", 2, memory="r1") + [tactical(2, "r")[0]] + rewind
              + transition("Revised again", 2, memory="r2"))
    config = {**CONFIG, "breakers": {"no_progress_steps": 0},
              "phase_settings": {"max_rewinds": 1}}
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "stuck"
    assert "the job was rewound 2 times (phase_settings.max_rewinds=1)" in result.summary
    first_rewind = next(r for r in model_server.requests(handle.id)
                        if "begins: Rewind" in r["messages"][1]["content"])
    assert ("The todos of phase 2, with what was done, are in archive/phase_2.yaml."
            in first_rewind["messages"][1]["content"])
    assert "archive/phase_2.yaml has them too" in first_rewind["messages"][-1]["content"]
    assert ("What phase 2 did (rewound):\n- [x] 1. Task 1 - did a 1\n- [ ] 2. Task 2\n"
            in first_rewind["messages"][1]["content"])
    assert await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml") is not None
