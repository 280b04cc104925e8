"""Record the histories of representative jobs into tests/histories/*.json.

    python -m tests.histories.record [TAG]

Scenarios: a plain job, a rewind by signal, an approval, continue-as-new, a failure, and
(from the `tool-listing` set on) a job that calls an MCP server's tool (mcp-server-time), and
(from the `typed-failures` set on) a tool run as a local activity that fails for good, and
(from the `ritual` set on) a job whose model breaks the ritual's rules: a predefined todo
completed before its file changed (check_files), a turn with several todo_complete calls, a
turn whose job_complete follows a todo_complete that would end the phase; (from the
`todo-files` set on) a todo_complete refused because the file its todo names is missing, and
a todo completed by the turn that wrote its file (`todo-named-files`, `todo-auto-complete`);
(after the `todo-files` set) a job_complete refused by the completion gate, then accepted
(`completion-gate`); (after the `final` set) a job whose todo_write copies the bootstrap's
own todos and is refused (`todo-write-checked`), then that the workflow completes when its
tactical phase ends with the deliverables in place (`complete-when-met`).

    python -m tests.histories.record hostile

records the `hostile` set (#13): a job sent the signals its handlers must not fail on -
a rewind that is a number, nested 3,000 deep, a lone surrogate, two inputs, a signal of an
unknown name (all listed in `state.rejected`) - then a good rewind, and an approval sent
as an undecoded payload.

(from the `ui-progress` set on, #15) a rewind by signal that restores the workspace to the
start of phase 2 (`rewind-restore`).

    python -m tests.histories.record quiet-end | cycles | at-rewind | todo-lines | off-todo |
        rewrite | planned | restated | deliverables | lines | quiet-retry

records one job (`SINGLE`): a react job whose model stops calling tools with its
expect_lines unmet (`quiet-end-gated`: it ends `stuck`); a job whose model takes two calls by
turns until the repetition breaker stops it (`repetition-cycles`); a rewind phase told which
deliverables are missing (`completion-at-rewind`); a todo that names a deliverable held to
its expected lines (`todo-expected-lines`); a strategic write of a deliverable while the
todo asks for main_plan.md, refused (`off-todo-writes`); a rewrite of workspace.md (its
todo done) while the todo asks for main_plan.md, refused (`off-todo-planning-writes`), with
an expected line given by its glob in the config; a bootstrap whose todo_write copies the
bootstrap's todos three times, ended by the workflow's own plan of the deliverable
(`plan-by-workflow`), whose first write lacks its heading and is shown mended; the same
job with that todo restated as the mended write (`todo-restated`); a bootstrap whose plan
names no deliverable and whose write_file of todos.yaml are both refused, the plan of the
deliverable shown (`deliverables-plan`); a todo whose file lacks a sentence (no mend can put
it in) restated as the lines its file must hold (`todo-restated-lines`); a react job whose
model echoes tool responses until the nudges run out, tried again in a fresh attempt
(`react-quiet-retry`); with the small profile, a react job with a tool of the task that
claims completion four times without work and ends `stuck` (`claim-needs-work`); a
plan_revise_execute job whose revision, then one whose first plan, never comes: the best
plan runs, the task runs as one step (`planning-goes-on`, `planning-goes-on-one-step`); one
whose step fails and whose revision of the rest never comes: the rest runs as one step
(`replanning-goes-on`); a phase_alternation job whose tactical phases only call a tool of
the task that writes no file, and go on past `max_idle_phases` (`work-without-files`); with
the small profile, a plan_revise_execute step that made its call and failed with the text of
its step_result's refusal: the step done (`refusal-echo`).

    python -m tests.histories.record follow-up

records follow-up turns (#33): a react job whose completed turn waits, takes an `instruct`
update that adds a tool, uses it in turn 2, waits again and is cancelled in the wait (it ends
completed with turn 2's result: `follow-up-react`); a phase_alternation job sent an
instruction by signal during turn 1, whose second turn is a strategic phase that re-plans
(`follow-up-phases`).

    python -m tests.histories.record local-calls

records the main set (the scenarios above) with every job opted in to a fast endpoint's
model calls run as local activities (`llm.local_calls_in_a_row: 3`, `local-model-calls`).

    python -m tests.histories.record strategies

records the `strategies` set instead (#16): one job under each strategy that is not the
default - react with a rewind signal, plan_revise_execute with a revision, a failed step
and continue-as-new every 2 stages (a file per run), nested (the coordinator and its two
child jobs), auto routed to react.
CI replays every committed file against the current workflow code
(tests/test_committed_histories.py). Record with a TAG (files `<scenario>.<TAG>.json`)
after a change guarded by `workflow.patched`, keeping the older files: they prove that
jobs started before the change still replay, the new ones that jobs on the new path do.
Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowFailureError
from temporalio.common import RawValue

from activities.config_files import load_config
from activities.tools import registry as tool_registry
from activities.tools import run as tools
from activities.tools.mcp_config import parse
from activities.tools.mcp_sessions import McpServers
from bench.harness import bench_stack
from devstack.processes import venv_bin
from tests import completion_corpus, strategy_scripts
from tests.conftest import running_worker
from tests.scripts import (
    PROMPT_COPY,
    bootstrap,
    call,
    finish,
    full_job,
    step,
    tactical,
    todos,
    transition,
)
from workflows.contract import ApproveRequest, JobInput, JobResult, JobState

HERE = Path(__file__).resolve().parent
TAG = sys.argv[1] if len(sys.argv) > 1 else ""
LOCAL_FAILURE = {"extends": "creator",
                 "tools": {"domain": ["fetch_rates"], "local": ["read_file", "write_file",
                                                                "list_files", "fetch_rates"],
                           "retry": {"initial_interval_seconds": 0.1, "backoff_coefficient": 1}}}
GATED = {"extends": "creator", "approval_required": ["delete_file"],
         "tools": {"workspace": ["read_file", "write_file", "list_files", "search_files",
                                 "delete_file"]}}


async def _unreachable(files, args, limits):
    raise ConnectionError("rates service unreachable")


def raw_json(data: bytes) -> RawValue:
    return RawValue(Payload(metadata={"encoding": b"json/plain"}, data=data))


async def record_hostile() -> None:
    async with bench_stack() as b, running_worker(b.client, "record"):
        name = "hostile-steering"
        b.model.set_script(name, bootstrap() + [
            step(call("write_file", path="tmp.md", content="x")),
            step(call("delete_file", path="tmp.md")), {**tactical(5)[1], "latency_ms": 1500}]
            + transition("Revised", 5) + tactical(5, "r") + finish())
        job = await b.client.start_workflow(
            "AgentJob", JobInput(config=GATED, instructions="# Recorded job\nx", documents=[]),
            id=name, task_queue="record", result_type=JobResult)
        while not (st := await job.query("state"))["pending_approvals"]:
            await asyncio.sleep(0.05)
        await job.signal("rewind", 5)
        await job.signal("rewind", raw_json(b"[" * 3000 + b"]" * 3000))
        await job.signal("rewind", raw_json(b'"a\\ud800"'))
        await job.signal("rewind", args=["a", "b"])
        await job.signal("rewnid", "x")
        while len((await job.query("state"))["rejected"]) < 5:
            await asyncio.sleep(0.05)
        call_id = st["pending_approvals"][0]["call_id"]
        await job.execute_update("approve", raw_json(
            json.dumps({"call_id": call_id, "approved": True}).encode()))
        while len(b.model.requests(name)) < len(bootstrap()) + 3:
            await asyncio.sleep(0.05)
        await job.signal("rewind", "the scope changed")
        await asyncio.wait_for(job.result(), 120)
        write(name, await job.fetch_history())


async def record_strategies() -> None:
    async with bench_stack() as b, running_worker(b.client, "record"):
        async def start(name: str, script: list[dict] | None, config: dict):
            if script is not None:
                b.model.set_script(name, script)
            return await b.client.start_workflow(
                "AgentJob", JobInput(config={"extends": "creator", **config},
                                     instructions=strategy_scripts.INSTRUCTIONS, documents=[]),
                id=name, task_queue="record", result_type=JobResult)

        react_script = strategy_scripts.react(("report.md", "notes/b.md"))
        react_script[1] = {**react_script[1], "latency_ms": 1500}  # the rewind lands here
        react = await start("react", react_script, {"strategy": "react"})
        while len(b.model.requests("react")) < 2:
            await asyncio.sleep(0.05)
        await react.signal("rewind", "write the notes again")
        await react.result()

        pre = await start("plan-revise-execute", strategy_scripts.plan_revise_execute(), {
            "strategy": "plan_revise_execute", "continue_as_new": {"every_phases": 2}})
        await pre.result()

        parent, children = strategy_scripts.nested("nested")
        b.model.set_script("nested", parent)
        for child_id, script in children.items():
            b.model.set_script(child_id, script)
        nested = await start("nested", None, {
            "strategy": "nested", "phase_settings": {"min_todos": 1, "max_todos": 4}})
        await nested.result()

        auto = await start("auto", strategy_scripts.auto("C") + strategy_scripts.react(),
                           {"strategy": "auto"})
        await auto.result()

        for wf_id in ("react", "nested", *children, "auto"):
            name = wf_id.replace("nested-p2-t", "nested-child-")
            write(name, await b.client.get_workflow_handle(wf_id).fetch_history())
        runs = [wf async for wf in b.client.list_workflows(
            'WorkflowId="plan-revise-execute"')]
        runs.sort(key=lambda wf: wf.start_time)
        for n, wf in enumerate(runs, 1):
            h = await b.client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
            write(f"plan-revise-execute-run{n}", h)


async def record_follow_up() -> None:
    async with bench_stack() as b, running_worker(b.client, "record"):
        async def start(name: str, script: list[dict], config: dict):
            b.model.set_script(name, script)
            return await b.client.start_workflow(
                "AgentJob", JobInput(config={"extends": "creator", **config},
                                     instructions=strategy_scripts.INSTRUCTIONS, documents=[]),
                id=name, task_queue="record", result_type=JobResult)

        async def waiting(handle, turn: int) -> None:
            while True:
                st = await handle.query("state", result_type=JobState)
                if st.status == "waiting_for_instructions" and st.turn == turn:
                    return
                await asyncio.sleep(0.1)

        react = await start("follow-up-react", strategy_scripts.react() + [
            step(call("word_count", path="notes/a.md")),
            step(call("write_file", path="notes/count.md", content="words: 3\n")),
            step(call("job_complete", summary="counted", deliverables=["notes/count.md"],
                      confidence=0.9))],
            {"strategy": "react", "follow_up": {"wait_seconds": 600}})
        await waiting(react, 1)
        await react.execute_update("instruct", {
            "instruction": "Count the words of notes/a.md into notes/count.md.",
            "tools": ["word_count"]}, result_type=str)
        await waiting(react, 2)
        await react.cancel()  # the wait ends; the job with turn 2's result
        await react.result()

        turn1 = bootstrap("Phase A", 2) + tactical(2, "a") + finish("turn one", ["work/a_1.md"])
        turn2 = transition("Gamma", 2) + tactical(2, "g") + finish("turn two", ["work/g_1.md"])
        turn1[2] = {**turn1[2], "latency_ms": 1500}  # the signal lands during turn 1
        phases = await start("follow-up-phases", turn1 + turn2, {})
        while len(b.model.requests("follow-up-phases")) < 2:
            await asyncio.sleep(0.05)
        await phases.signal("instruct", "Also write the gamma notes.")
        await phases.result()
        for name in ("follow-up-react", "follow-up-phases"):
            write(name, await b.client.get_workflow_handle(name).fetch_history())


BOOTSTRAP_TODOS = [t if isinstance(t, str) else t.content
                   for t in load_config("defaults", policy=False).strategic_todos.bootstrap]
SINGLE = {  # tag -> (job id, script, config): one job each, for one patch's path
    "quiet-end": ("react-quiet-end", [step(content="I will write it now.")] * 4, {
        "extends": "creator", "strategy": "react",
        "small": {"expect_lines": {"report.md": ["# Report"]}}}),  # quiet-end-gated
    "cycles": ("two-calls-by-turns", bootstrap()[:3] + [
        step(call("write_file", path="output/summary.md", content="# Summary\n")),
        step(call("todo_complete", notes="the plan"))] * 20, {
        "extends": "creator", "breakers": {"no_progress_steps": 0}}),  # repetition-cycles
    "at-rewind": ("rewind-deliverables", bootstrap() + [
        step(call("todo_rewind", issue="wrong plan"))] + transition("Revised") + tactical(
        5, "r") + finish()[:2] + [step(call("write_file", path="out.md", content="# Out\n")),
                                  step(call("job_complete", summary="done", deliverables=[],
                                            confidence=0.9, notes=""))], {
        "extends": "creator", "small": {"expect_lines": {"out.md": ["# Out"]}}}),
    "todo-lines": ("todo-expected-lines", bootstrap()[:-2] + [
        step(call("todo_write", phase="Notes", description="d",
                  todos=[{"id": 1, "content": "Write notes/apples.md about apples"}])),
        step(call("todo_complete", notes="todos")),
        step(call("write_file", path="notes/apples.md", content="Apples.\n")),  # not done
        step(call("todo_complete", notes="apples")),  # refused: '# Apples' is missing
        step(call("write_file", path="notes/apples.md", content="# Apples\nApples.\n")),
    ] + finish(), {"extends": "creator", "breakers": {"no_progress_steps": 0}, "small": {
        "expect_lines": {"notes/apples.md": ["# Apples"]}}}),
    "off-todo": ("off-todo-write", bootstrap()[:3] + [
        step(call("write_file", path="output/summary.md", content="# Summary\n")),  # refused
    ] + bootstrap()[3:] + tactical(5) + finish(), {
        "extends": "creator", "breakers": {"no_progress_steps": 0}}),
    "rewrite": ("done-todo-rewrite", bootstrap()[:3] + [
        step(call("write_file", path="workspace.md", content="# Workspace\n\nagain\n")),
        step(call("todo_complete", notes="plan")),  # refused, the plan's write shown
    ] + bootstrap()[3:] + tactical(5) + finish(), {
        "extends": "creator", "breakers": {"no_progress_steps": 0}, "small": {
            "expect_lines": {"work/a_1.md": [  # a line given by its glob, in the config
                "result a 1", {"glob": "result *", "describe": "a result line"}]}}}),
    "planned": ("planned-by-workflow", bootstrap()[:-2] + [
        step(call("todo_write", phase="P", description="d", todos=[
            {"id": i, "content": c} for i, c in enumerate(BOOTSTRAP_TODOS, 1)]))] * 3 + [
        step(call("write_file", path="notes/apples.md", content="Apples are red.\n")),
        step(call("write_file", path="notes/apples.md", content="# Apples\nApples are red.\n")),
    ] + finish(), {"extends": "creator", "breakers": {"no_progress_steps": 0}, "small": {
        "expect_lines": {"notes/apples.md": [  # a mended write shown, then the workflow's plan
            "# Apples", {"glob": "[A-Za-z]* [a-z]*", "describe": "a sentence"}]}}}),
}
SINGLE["claim-beside-a-failure"] = ("react-claim-beside-a-failure", [
    step(call("read_file", path="secret.md"), call("write_file", path="report.md",
                                                   content="secret.md: present\n"),
         call("job_complete", summary="first", deliverables=["report.md"], confidence=0.9)),
    step(call("write_file", path="report.md", content="secret.md: absent\n"),
         call("job_complete", summary="second", deliverables=["report.md"], confidence=0.9))],
    {"extends": "defaults", "strategy": "react", "deliverables": ["report.md"]})
SINGLE["one-claim-per-answer"] = ("react-one-claim-per-answer", [
    step(*[call("job_complete", summary="early", deliverables=["report.md"],
                confidence=0.9)] * 4),  # one refused, three not run
    step(call("write_file", path="report.md", content="# Report\n")),
    step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9))],
    {"extends": "defaults", "strategy": "react", "deliverables": ["report.md"]})
SINGLE["plan-not-the-prompt"] = ("phases-plan-not-the-prompt", bootstrap()[:-2] + [
    step(call("todo_write", phase="P", description="d", todos=[  # refused: the prompt's
        {"id": i, "content": c} for i, c in enumerate(PROMPT_COPY, 1)])),
    step(call("todo_complete", notes="todos")),  # the gate: no todos.yaml
    step(call("todo_write", phase="P", description="d",
              todos=[{"id": 1, "content": "Write work/a_1.md"}])),
    step(call("todo_complete", notes="todos")),
] + tactical(1) + finish(), {"extends": "creator", "breakers": {"no_progress_steps": 0}})
SINGLE["todo-needs-a-call"] = ("phases-todo-needs-a-call", bootstrap()[:-2] + [
    step(call("todo_write", phase="P", description="d",
              todos=[{"id": 1, "content": "Count the words of instructions.md"}])),
    step(call("todo_complete", notes="todos")),
    step(call("todo_complete", notes="counted")),  # refused once: no tool call for it
    step(call("word_count", path="instructions.md"),
         call("todo_complete", notes="counted: 1 word")),
] + finish(), {"extends": "creator", "llm": {"profile": "small"},
               "tools": {"domain": ["word_count"]}, "breakers": {"no_progress_steps": 0}})
_COUNTED = [step(call("word_count", path="instructions.md"),
                  call("todo_complete", notes="counted"))] * 2
SINGLE["work-without-files"] = ("phases-work-without-files", bootstrap(n_todos=2) + _COUNTED
                                + transition("Again", 2, memory="m1") + _COUNTED
                                + finish("counted twice"), {
    "extends": "creator", "tools": {"domain": ["word_count"]},
    "breakers": {"no_progress_steps": 0}, "phase_settings": {"max_idle_phases": 2}})
SINGLE["claim-needs-work"] = ("react-claim-needs-work", [step(call("list_files"))] + [
    step(call("job_complete", summary="The task was completed successfully.", deliverables=[],
              confidence=0.9))] * 4,  # three refused: no work done; the fourth ends it stuck
    {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"},
     "tools": {"domain": ["word_count"]}})
SINGLE["mend-workspace-folder"] = ("react-mend-workspace-folder", [
    step(call("write_file", path="workspace/report.md", content="secret.md: absent\n")),
    step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9))],
    {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"},
     "deliverables": ["report.md"]})
_OWN_FILES = next(j for j in completion_corpus.JOBS if j.name == "plan-names-files-of-its-own")
SINGLE["task-files-first"] = ("phases-task-files-first",
                              completion_corpus.phase_alternation(_OWN_FILES),
                              {"extends": "defaults", "llm": {"profile": "small"}})
TASKS = {"task-files-first": "# A summary\n\nWrite `summary.md`.\n"}  # tag -> instructions
_SUMMARY = next(j for j in completion_corpus.JOBS if j.name == "model-declares-in-plan")
_MENDED = completion_corpus.phase_alternation(_SUMMARY)  # its first write under workspace/
_MENDED[0] = step(call("write_file", path="workspace/workspace.md", content="# Workspace\nx\n"),
                  call("todo_complete"))
SINGLE["mend-workspace-folder-phases"] = (
    "phases-mend-workspace-folder", _MENDED, {"extends": "defaults", "llm": {"profile": "small"}})
TASKS["mend-workspace-folder-phases"] = "# A plan\n\nWrite `plan-out.md`.\n"
FOLDERS = {"mend-workspace-folder-phases": "mend-workspace-folder"}  # tag -> its patch's
_PRE: dict[str, Any] = {"extends": "creator", "strategy": "plan_revise_execute"}
_NOTES = [step(call("write_file", path="notes/a.md", content=strategy_scripts.A),
               call("write_file", path="notes/b.md", content=strategy_scripts.B)),
          step(call("step_result", status="done", summary="both notes",
                    files=["notes/a.md", "notes/b.md"]))]
_NO_CALL = [step(content="Here is the plan: write the notes, then the report.")] * 4
SINGLE["planning-goes-on"] = ("pre-planning-goes-on", [  # no revision: the best plan runs
    step(call("submit_plan", steps=[{"id": 1, "name": "Write the notes", "detail": "a, b"}])),
    step(call("submit_evaluation", score=0.5, reasons="no report"))] + _NO_CALL + _NOTES, _PRE)
SINGLE["planning-goes-on-one-step"] = ("pre-planning-goes-on-one-step", _NO_CALL + _NOTES, _PRE)
TASKS["planning-goes-on"] = TASKS["planning-goes-on-one-step"] = strategy_scripts.INSTRUCTIONS
FOLDERS["planning-goes-on-one-step"] = "planning-goes-on"
SINGLE["replanning-goes-on"] = ("pre-replanning-goes-on", [  # a failed step, no replan
    step(call("submit_plan", steps=[{"id": 1, "name": "Write notes/a.md", "detail": "alpha"},
                                    {"id": 2, "name": "Write notes/b.md", "detail": "beta"}])),
    step(call("submit_evaluation", score=0.9, reasons="fine")),
    step(call("step_result", status="failed", summary="not yet"))] + _NO_CALL + _NOTES, _PRE)
TASKS["replanning-goes-on"] = strategy_scripts.INSTRUCTIONS
SINGLE["step-files-there"] = ("pre-step-files-there", [
    step(call("submit_plan", steps=[{"id": 1, "name": "Write the notes", "detail": "a, b"}])),
    step(call("submit_evaluation", score=0.9, reasons="fine")), _NOTES[0],
    step(call("step_result", status="done", summary="both notes",  # refused: no workspace
              files=["notes/a.md", "notes/b.md", "workspace"])), _NOTES[1]], _PRE)
TASKS["step-files-there"] = strategy_scripts.INSTRUCTIONS
SINGLE["refusal-echo"] = ("pre-refusal-echo", [
    step(call("submit_plan", steps=[{"id": 1, "name": "Count the words", "detail": "of it"}])),
    step(call("submit_evaluation", score=0.9, reasons="fine")),
    step(call("word_count", path="instructions.md")),
    step(call("step_result", status="done", summary="counted", files=["workspace"])),  # refused
    step(call("step_result", status="failed", summary=(  # the refusal repeated: the step done
        "Error: not in the workspace: workspace. `files` names only the workspace files this "
        "step wrote, none when it wrote none: call step_result again.")))],
    {"extends": "defaults", "strategy": "plan_revise_execute", "llm": {"profile": "small"},
     "tools": {"workspace": [], "domain": ["word_count"]}})
TASKS["refusal-echo"] = "# Count\n\nCount the words of instructions.md.\n"
SINGLE["restated"] = ("todo-restated", *SINGLE["planned"][1:])  # the todo restated as well
SINGLE["quiet-retry"] = ("react-quiet-retry", [
    step(content="<tool_response>\nWrote 9 bytes to notes.md.\n</tool_response>")] * 4 + [
    step(call("write_file", path="report.md", content="# Report\n")),
    step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9,
              notes=""))], {"extends": "creator", "strategy": "react",
                            "small": {"expect_lines": {"report.md": ["# Report"]}}})
SINGLE["lines"] = ("todo-restated-lines", bootstrap()[:-2] + [
    step(call("todo_write", phase="Notes", description="d", todos=[
        {"id": 1, "content": "Write notes/apples.md with the first line of instructions.md"}])),
    step(call("todo_complete", notes="todos")),
    step(call("write_file", path="notes/apples.md", content="# Apples")),  # no sentence
    step(call("write_file", path="notes/apples.md", content="# Apples\nApples are red.\n")),
] + finish(), {"extends": "creator", "breakers": {"no_progress_steps": 0}, "small": {
    "expect_lines": {"notes/apples.md": [
        "# Apples", {"glob": "[A-Za-z]* [a-z]*", "describe": "a sentence"}]}}})
SINGLE["deliverables"] = ("deliverables-plan", bootstrap()[:-2] + [
    step(call("todo_write", phase="P", description="d", todos=[  # names no deliverable
        {"id": 1, "content": "Read the workspace and explore its contents."}])),
    step(call("write_file", path="todos.yaml", content="The phase is planned.")),  # refused
    step(call("todo_write", phase="A", description="d",
              todos=[{"id": 1, "content": "Write a.md with these lines: # A"}])),
    step(call("todo_complete", notes="todos")),
    step(call("write_file", path="a.md", content="# A\n")),
] + finish(), {"extends": "creator", "breakers": {"no_progress_steps": 0}, "small": {
    "expect_lines": {"a.md": ["# A"]}, "plans_name_deliverables": True}})


async def record_single() -> None:
    """One job of SINGLE[TAG], into tests/histories/<TAG>/, e.g. `claim-beside-a-failure`
    (a react job claims completion beside a failed read: refused once)."""
    name, script, config = SINGLE[TAG]
    async with bench_stack() as b, running_worker(b.client, "record"):
        b.model.set_script(name, script)
        job = await b.client.start_workflow(
            "AgentJob", JobInput(config=config, instructions=TASKS.get(TAG, "x"),
                                 documents=[]),
            id=name, task_queue="record", result_type=JobResult)
        await job.result()
        history = await job.fetch_history()
    folder = HERE / FOLDERS.get(TAG, TAG)  # a patch's histories (docs/versioning.md)
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(json.loads(history.to_json()), indent=1))
    print(f"wrote {TAG}/{name}.json: {len(history.events)} events")


async def record() -> None:
    tool_registry.TOOLS["fetch_rates"] = tool_registry.ToolSpec(
        "fetch_rates", "Fetch exchange rates.", tool_registry.PathArgs)
    tools.HANDLERS["fetch_rates"] = _unreachable
    async with bench_stack() as b:
        mcp = McpServers(parse({"servers": {"time": {"command": venv_bin("mcp-server-time")}}},
                               "record"))
        async with running_worker(b.client, "record", mcp=mcp):
            async def start(name: str, script: list[dict], config: Any = "creator"):
                b.model.set_script(name, script)
                if TAG == "local-calls":  # every job opts in to fast model calls run locally
                    config = {**({"extends": config} if isinstance(config, str) else config),
                              "llm": {"local_calls_in_a_row": 3}}
                return await b.client.start_workflow(
                    "AgentJob", JobInput(config=config, instructions="# Recorded job\nx",
                                         documents=[]),
                    id=name, task_queue="record", result_type=JobResult)

            plain = await start("plain", full_job(1))
            await plain.result()

            rewind = await start("rewind", bootstrap() + tactical(1) + [
                {**tactical(5)[1], "latency_ms": 1500}] + transition("Revised", 5)
                + tactical(5, "r") + finish())
            while len(b.model.requests("rewind")) < 9:
                await asyncio.sleep(0.05)
            await rewind.signal("rewind", "the scope changed")
            await rewind.result()

            approval = await start("approval", bootstrap() + [
                step(call("write_file", path="tmp.md", content="x")),
                step(call("delete_file", path="tmp.md"))] + tactical(5)
                + full_job(1)[-4:-1] + finish()[-1:],
                GATED)
            while True:
                st = await approval.query("state")
                if st["pending_approvals"]:
                    break
                await asyncio.sleep(0.05)
            await approval.execute_update("approve", ApproveRequest(
                call_id=st["pending_approvals"][0]["call_id"], approved=True))
            await approval.result()

            can = await start("continue-as-new", full_job(2),
                              {"extends": "creator", "continue_as_new": {"every_phases": 2}})
            await can.result()

            failure = await start("failure", bootstrap()[:3] + [{"error": {"status": 400}}])
            try:
                await failure.result()
            except WorkflowFailureError:
                pass

            mcp_job = await start("mcp", bootstrap() + [
                step(call("time__get_current_time", timezone="UTC")),
                step(call("write_file", path="now.json", content="{{last_tool_result}}"))]
                + tactical(5) + full_job(1)[-4:-1] + finish()[-1:],
                {"extends": "creator", "tools": {"domain": ["time.get_current_time"]}})
            await mcp_job.result()
            local_failure = await start("local-failure", bootstrap() + [
                step(call("fetch_rates", path="rates.json"))] + finish(), LOCAL_FAILURE)
            try:
                await local_failure.result()
            except WorkflowFailureError:
                pass

            named = [{"id": 1, "content": "Write work/a.md"},
                     {"id": 2, "content": "Write work/a_2.md"}] + todos(5)[2:]
            ritual = await start("ritual", [
                step(call("list_files")),
                step(call("todo_complete", notes="explored")),  # workspace.md unchanged
            ] + bootstrap()[2:-2] + [
                step(call("todo_write", phase="Phase A", description="d", todos=named)),
                step(call("todo_complete", notes="todos written")),
                step(call("todo_complete", notes="a")),  # work/a.md missing (todo-named-files)
                step(call("write_file", path="work/a.md", content="a"),
                     call("todo_complete", notes="a"), call("todo_complete", notes="b")),
                step(call("write_file", path="work/a_2.md", content="a2"))]  # todo-auto-complete
                + tactical(4)[1:] + transition("Last")[:3] + [
                step(call("todo_write", phase="Last", description="d",
                          todos=todos(1, "Polish")),
                     call("todo_complete", notes="todos"),
                     call("job_complete", summary="done", deliverables=["work/a.md"],
                          confidence=0.9, notes=""))])
            await ritual.result()
            gate = await start("completion-gate", bootstrap() + tactical(5) + finish()[:2] + [
                step(call("job_complete", summary="early", deliverables=[], confidence=0.5,
                          notes="")),  # out.md missing: refused (completion-gate)
                step(call("write_file", path="out.md", content="# Out\n")),
                step(call("job_complete", summary="done", deliverables=["out.md"],
                          confidence=0.9, notes=""))],
                {"extends": "creator", "deliverables": ["out.md"]})
            await gate.result()
            boot = [t if isinstance(t, str) else t.content for t in load_config(
                "defaults", policy=False).strategic_todos.bootstrap]
            met = await start("complete-when-met", bootstrap()[:-2] + [
                step(call("todo_write", phase="P", description="d",  # todo-write-checked
                          todos=[{"id": i, "content": c} for i, c in enumerate(boot, 1)]))]
                + bootstrap()[-2:] + tactical(5) + finish(), {
                "extends": "creator", "llm": {"profile": "small"}, "small": {
                    "expect_lines": {"work/a_5.md": ["result a 5"]}}})
            await met.result()
            restore = await start("rewind-restore", bootstrap() + tactical(1) + [
                {**tactical(5)[1], "latency_ms": 1500}] + transition("Revised", 5)
                + tactical(5, "r") + finish())
            while len(b.model.requests("rewind-restore")) < 9:
                await asyncio.sleep(0.05)
            await restore.signal("rewind", {"issue": "the scope changed", "restore_phase": 2})
            await restore.result()

            for handle in (plain, rewind, approval, failure, mcp_job, local_failure, ritual,
                           restore, gate, met):
                write(handle.id, await handle.fetch_history())
            runs = [wf async for wf in b.client.list_workflows('WorkflowId="continue-as-new"')]
            runs.sort(key=lambda wf: wf.start_time)
            for n, wf in enumerate(runs, 1):
                h = await b.client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
                write(f"continue-as-new-run{n}", h)


def write(name: str, history) -> None:
    path = HERE / (f"{name}.{TAG}.json" if TAG else f"{name}.json")
    path.write_text(json.dumps(json.loads(history.to_json()), indent=1))
    print(f"wrote {path.name}: {len(history.events)} events")


if __name__ == "__main__":
    asyncio.run(record_strategies() if TAG == "strategies" else record_follow_up()
                if TAG == "follow-up" else record_hostile() if TAG == "hostile"
                else record_single() if TAG in SINGLE else record())
