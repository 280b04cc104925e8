"""Record the histories of representative jobs into tests/histories/*.json: the second
baseline (docs/versioning.md), one history per scenario, recorded on today's one code path.

    python -m tests.histories.record              the main set: a plain job, a rewind by
        signal, an approval, continue-as-new (a file per run), a model error that fails the
        job, an MCP server's tool, a local tool activity that fails for good, the ritual's
        refusals (a predefined todo completed before its file changed, several todo_complete
        in a turn, a job_complete after a todo_complete), a job_complete refused until its
        deliverable is there (`completion-gate`), a rewind that restores phase 2's files
    python -m tests.histories.record singles      one job per guard or end (SINGLE): the
        repetition breaker, the strategic phase's guards, the claim guards, a claim with
        confidence 0, the workflow's completion against declared deliverables and its
        absence without them, plan_revise_execute's ways on without a planner, the small
        profile at the model boundary
    python -m tests.histories.record strategies   one job under each other strategy
    python -m tests.histories.record hostile      signals the handlers must survive
    python -m tests.histories.record follow-up    follow-up turns by update and by signal
    python -m tests.histories.record local-calls  the main set with model calls run locally
    python -m tests.histories.record_live         the live stream (record_live.py)

CI replays every committed file against the current workflow code
(tests/test_committed_histories.py). A change of workflow code ships as a new worker
version; a history is recorded again only at a new baseline, never to make a failing replay
pass.
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

from switchback.activities.tools import registry as tool_registry
from switchback.activities.tools import run as tools
from switchback.activities.tools.mcp_config import parse
from switchback.activities.tools.mcp_sessions import McpServers
from switchback.bench.harness import bench_stack
from switchback.devstack.processes import venv_bin
from switchback.workflows.contract import ApproveRequest, JobInput, JobResult, JobState
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


_PRE: dict[str, Any] = {"extends": "creator", "strategy": "plan_revise_execute"}
_NOTES = [step(call("write_file", path="notes/a.md", content=strategy_scripts.A),
               call("write_file", path="notes/b.md", content=strategy_scripts.B)),
          step(call("step_result", status="done", summary="both notes",
                    files=["notes/a.md", "notes/b.md"]))]
_NO_CALL = [step(content="Here is the plan: write the notes, then the report.")] * 4
_COUNTED = [step(call("word_count", path="instructions.md"),
                  call("todo_complete", notes="counted"))] * 2
_NEVER = next(j for j in completion_corpus.JOBS if j.name == "never-claims")
# name -> (script, config, instructions): one job each, recorded by `record singles`
SINGLE: dict[str, tuple[list[dict], Any, str]] = {
    "repetition-cycles": (bootstrap()[:3] + [
        step(call("write_file", path="output/summary.md", content="# Summary\n")),
        step(call("todo_complete", notes="the plan"))] * 20, {
        "extends": "creator", "breakers": {"no_progress_steps": 0}}, "x"),
    "done-todo-rewrite": (bootstrap()[:3] + [
        step(call("write_file", path="workspace.md", content="# Workspace\n\nagain\n")),
        step(call("todo_complete", notes="plan")),  # refused: main_plan.md missing
    ] + bootstrap()[3:] + tactical(5) + finish(), {
        "extends": "creator", "breakers": {"no_progress_steps": 0}}, "x"),
    "react-claim-beside-a-failure": ([
        step(call("read_file", path="secret.md"), call("write_file", path="report.md",
                                                       content="secret.md: present\n"),
             call("job_complete", summary="first", deliverables=["report.md"], confidence=0.9)),
        step(call("write_file", path="report.md", content="secret.md: absent\n"),
             call("job_complete", summary="second", deliverables=["report.md"],
                  confidence=0.9))],
        {"extends": "defaults", "strategy": "react", "deliverables": ["report.md"]}, "x"),
    "react-one-claim-per-answer": ([
        step(*[call("job_complete", summary="early", deliverables=["report.md"],
                    confidence=0.9)] * 4),  # one refused, three not run
        step(call("write_file", path="report.md", content="# Report\n")),
        step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9))],
        {"extends": "defaults", "strategy": "react", "deliverables": ["report.md"]}, "x"),
    "react-gave-up": ([step(call("job_complete", summary="The task is not achieved: no data.",
                                 deliverables=[], confidence=0.0))],
                      {"extends": "defaults", "strategy": "react"}, "What was x in 1900?"),
    "phases-plan-not-the-prompt": (bootstrap()[:-2] + [
        step(call("todo_write", phase="P", description="d", todos=[  # refused: the prompt's
            {"id": i, "content": c} for i, c in enumerate(PROMPT_COPY, 1)])),
        step(call("todo_complete", notes="todos")),  # the gate: no todos.yaml
        step(call("todo_write", phase="P", description="d",
                  todos=[{"id": 1, "content": "Write work/a_1.md"}])),
        step(call("todo_complete", notes="todos")),
    ] + tactical(1) + finish(), {"extends": "creator", "breakers": {"no_progress_steps": 0}},
        "x"),
    "phases-work-without-files": (
        bootstrap(n_todos=2) + _COUNTED + transition("Again", 2, memory="m1") + _COUNTED
        + finish("counted twice"), {
            "extends": "creator", "tools": {"domain": ["word_count"]},
            "breakers": {"no_progress_steps": 0}, "phase_settings": {"max_idle_phases": 2}}, "x"),
    "phases-declared-met": (completion_corpus.phase_alternation(_NEVER), {
        "extends": "defaults", "deliverables": _NEVER.deliverables}, "x"),
    "phases-declared-nothing": (completion_corpus.phase_alternation(_NEVER), "defaults", "x"),
    "pre-planning-goes-on": ([  # no revision: the best plan runs
        step(call("submit_plan", steps=[{"id": 1, "name": "Write the notes", "detail": "a, b"}])),
        step(call("submit_evaluation", score=0.5, reasons="no report"))] + _NO_CALL + _NOTES,
        _PRE, strategy_scripts.INSTRUCTIONS),
    "pre-planning-goes-on-one-step": (_NO_CALL + _NOTES, _PRE, strategy_scripts.INSTRUCTIONS),
    "pre-replanning-goes-on": ([  # a failed step, no replan: the rest runs as one step
        step(call("submit_plan", steps=[{"id": 1, "name": "Write notes/a.md", "detail": "alpha"},
                                        {"id": 2, "name": "Write notes/b.md", "detail": "beta"}])),
        step(call("submit_evaluation", score=0.9, reasons="fine")),
        step(call("step_result", status="failed", summary="not yet"))] + _NO_CALL + _NOTES,
        _PRE, strategy_scripts.INSTRUCTIONS),
    "pre-step-files-there": ([
        step(call("submit_plan", steps=[{"id": 1, "name": "Write the notes", "detail": "a, b"}])),
        step(call("submit_evaluation", score=0.9, reasons="fine")), _NOTES[0],
        step(call("step_result", status="done", summary="both notes",  # refused: no workspace
                  files=["notes/a.md", "notes/b.md", "workspace"])), _NOTES[1]], _PRE,
        strategy_scripts.INSTRUCTIONS),
    "react-small-profile": ([  # recorded while `small` read a write under workspace/ at the
        # root (a rule since removed: recorded again, its completion would be refused)
        step(call("write_file", path="workspace/report.md", content="secret.md: absent\n")),
        step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9))],
        {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"},
         "deliverables": ["report.md"]}, "x"),
}


async def record_singles() -> None:
    """Each job of SINGLE, into tests/histories/<name>.json."""
    async with bench_stack() as b, running_worker(b.client, "record"):
        for name, (script, config, instructions) in SINGLE.items():
            b.model.set_script(name, script)
            job = await b.client.start_workflow(
                "AgentJob", JobInput(config=config, instructions=instructions, documents=[]),
                id=name, task_queue="record", result_type=JobResult)
            await job.result()
            write(name, await job.fetch_history(), tagged=False)


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
            restore = await start("rewind-restore", bootstrap() + tactical(1) + [
                {**tactical(5)[1], "latency_ms": 1500}] + transition("Revised", 5)
                + tactical(5, "r") + finish())
            while len(b.model.requests("rewind-restore")) < 9:
                await asyncio.sleep(0.05)
            await restore.signal("rewind", {"issue": "the scope changed", "restore_phase": 2})
            await restore.result()

            for handle in (plain, rewind, approval, failure, mcp_job, local_failure, ritual,
                           restore, gate):
                write(handle.id, await handle.fetch_history())
            runs = [wf async for wf in b.client.list_workflows('WorkflowId="continue-as-new"')]
            runs.sort(key=lambda wf: wf.start_time)
            for n, wf in enumerate(runs, 1):
                h = await b.client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
                write(f"continue-as-new-run{n}", h)


def write(name: str, history, tagged: bool = True) -> None:
    path = HERE / (f"{name}.{TAG}.json" if TAG and tagged else f"{name}.json")
    path.write_text(json.dumps(json.loads(history.to_json()), indent=1))
    print(f"wrote {path.name}: {len(history.events)} events")


if __name__ == "__main__":
    asyncio.run(record_strategies() if TAG == "strategies" else record_follow_up()
                if TAG == "follow-up" else record_hostile() if TAG == "hostile"
                else record_singles() if TAG == "singles" else record())
