"""`switchback bfcl` (examples/bfcl, switchback_bfcl.runner): BFCL multi-turn cases run as
ordinary jobs - one user turn per follow-up instruction, the case an inline document - and
as the plain baseline loop, both against the scripted model answering with the ground
truth (valid) or a wrong call (invalid), scored with BFCL's checker. Needs bfcl-eval and
the package (`pip install --no-deps bfcl-eval==2026.3.23 mpmath filelock`, `pip install -e
examples/bfcl`; `make` installs both)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from switchback.activities.config_files import load_config  # noqa: E402
from switchback.apps import CommandError  # noqa: E402
from switchback.workflows.contract import JobState  # noqa: E402
from switchback_bfcl import baseline, cases, cli, runner, state  # noqa: E402
from tests.conftest import running_worker  # noqa: E402
from tests.scripts import bootstrap, call, finish, step, transition  # noqa: E402

DONE = step(call("job_complete", summary="done", deliverables=[], confidence=0.9))


def model_call(text: str) -> dict[str, Any]:
    """A call string as a model sends it (a scripted tool call; `call()` would take an
    argument called `name` for its own)."""
    name, args = state.call_arguments(text)
    return {"name": name, "arguments": args}


def answers(turns: list[list[str]], end: dict) -> list[dict]:
    """Per turn: the calls in one step, then `end` (react: job_complete; the baseline: an
    answer without a call)."""
    out = []
    for calls in turns:
        if calls:
            out.append(step(*[model_call(c) for c in calls]))
        out.append(end)
    return out


def truth(case_id: str) -> list[list[str]]:
    return cases.ground_truth(case_id)


def wrong(case_id: str) -> list[list[str]]:
    turns = [list(t) for t in truth(case_id)]
    turns[0][1] = "mkdir(dir_name='tmp')"  # multi_turn_base_0: 'temp' expected
    return turns


async def test_cases_run_as_jobs_and_as_the_baseline_and_are_scored(
        client, task_queue, model_server, s3, tmp_path):
    opts = runner.Options(prefix=f"t{task_queue[3:]}", strategies=["react"],
                          task_queue=task_queue, wait_seconds=120, poll_seconds=0.2,
                          concurrency=8)
    picked = [cases.load_case(i) for i in ("multi_turn_base_1", "multi_turn_base_3",
                                           "multi_turn_base_0", "multi_turn_base_4")]
    scripts = {"multi_turn_base_1": truth, "multi_turn_base_3": truth, "multi_turn_base_0": wrong}
    for case in picked:
        make = scripts.get(case["id"])
        react = answers(make(case["id"]), DONE) if make else answers(truth(case["id"])[:1], DONE)
        model_server.set_script(runner.job_id(opts, case, "react"), react)
        plain = answers((make or truth)(case["id"]), step(content="Done."))
        model_server.set_script(runner.job_id(opts, case, runner.BASELINE), plain)
    endpoint = baseline.endpoint_of(runner.base_config(opts))  # OPENAI_BASE_URL: scripted
    assert endpoint.base_url == model_server.base_url

    async with running_worker(client, task_queue):
        runs = await runner.run_cases(client, s3, opts, picked, endpoint, log=lambda t: None)
        base1 = client.get_workflow_handle(runner.job_id(opts, picked[0], "react"))
        st = await base1.query("state", result_type=JobState)
    by = {(r.case_id, r.strategy): r for r in runs}
    assert len(runs) == 8

    for case_id in ("multi_turn_base_1", "multi_turn_base_3"):  # the ground truth: valid
        for strategy in ("react", "baseline"):
            r = by[(case_id, strategy)]
            assert r.valid and r.status == "completed" and r.reached == r.turns, r
            assert r.model_calls == len(model_server.requests(r.job_id)) > 0
            assert r.tokens_in > 0 and r.tokens_out > 0 and r.wall_seconds > 0
            assert r.turns_right == r.turns and r.calls == truth(case_id)
            # the fewest calls per turn: the calls, then the end (react: job_complete; the
            # baseline: an answer); the first BFCL call at once
            assert r.turn_calls == [2] * r.turns and r.first_domain_call == [0] * r.turns
    for strategy in ("react", "baseline"):  # a wrong argument: BFCL's state mismatch
        r = by[("multi_turn_base_0", strategy)]
        assert not r.valid and r.status == "completed" and r.reached == 4
        assert r.error_type == "multi_turn:instance_state_mismatch", r
    # its script ends after turn 1: the job fails in turn 2 (of 3), scored with what it
    stopped = by[("multi_turn_base_4", "react")]  # recorded: BFCL's force-terminated rule
    assert stopped.status == "failed" and stopped.reached == 2
    assert stopped.turns_right == 1 and stopped.calls == [truth("multi_turn_base_4")[0], []]
    assert by[("multi_turn_base_0", "react")].turns_right == 0  # wrong in turn 1
    assert stopped.error_type == "multi_turn:force_terminated"
    assert stopped.error.startswith("job failed: ") and "exhausted" in stopped.error
    assert by[("multi_turn_base_4", "baseline")].valid

    # a job of its own input: the case document, the turns as follow-up instructions
    job = by[("multi_turn_base_1", "react")].job_id
    assert st.turn == 4 and st.status == "completed"  # max_turns: the last turn ends it
    text = (await s3.get("switchback", f"{job}/instructions.md")).decode()
    assert text.startswith(cases.turn_text(picked[0], 0))
    assert state.turn_of(text) == 3 and cases.turn_text(picked[0], 3) in text
    assert json.loads(await s3.get("switchback", f"{job}/{state.CASE_PATH}")) == {
        "id": "multi_turn_base_1"}
    recorded = json.loads(await s3.get("switchback", f"{job}/{state.CALLS_PATH}"))
    assert recorded["turns"] == truth("multi_turn_base_1")
    requests = model_server.requests(job)
    offered = [t["function"]["name"] for t in requests[0]["tools"]]
    assert sorted(offered) == sorted([*cases.tool_names(picked[0], 0), "job_complete"])
    assert_control_tools(requests, "react")
    assert cases.turn_text(picked[0], 1) in requests[2]["messages"][-1]["content"]

    # the baseline sent what BFCL sends: no system prompt, the user turns, BFCL's tools
    plain = model_server.requests(by[("multi_turn_base_1", "baseline")].job_id)
    assert plain[0]["messages"] == cases.turn_messages(picked[0], 0)
    assert plain[0]["tools"] == [state_tools(picked[0])[n] for n in cases.tool_names(picked[0], 0)]
    assert plain[-1]["messages"][-1]["role"] == "tool"

    md, js = runner.write_report(runs, tmp_path, opts.prefix, "test")
    report = md.read_text()
    # reached 4 + 2 + 4 + 2, right 4 + 2 + 0 + 1, of 4 + 2 + 4 + 3 turns
    assert "| base | react | 50% | 2 / 4 | 12 / 13 | 7 / 13 |" in report
    assert "| base | baseline | 75% | 3 / 4 |" in report
    assert "multi_turn:instance_state_mismatch 1" in report
    data = json.loads(js.read_text())
    assert len(data["runs"]) == 8 and {r["strategy"] for r in data["rows"]} == {
        "react", "baseline"}


def phase_alternation(turns: list[list[str]]) -> list[dict]:
    """Each turn: the strategic phase (bootstrap, then a transition for a follow-up), one
    tactical todo whose step makes the turn's calls, the closing strategic phase."""
    out: list[dict] = []
    for n, calls in enumerate(turns):
        out += bootstrap("Calls", 1) if n == 0 else transition(f"Turn {n + 1}", 1)
        out.append(step(*[model_call(c) for c in calls], call("todo_complete", notes="did")))
        out += finish(f"turn {n + 1}")
    return out


def plan_revise_execute(turns: list[list[str]]) -> list[dict]:
    """Turn 1: a plan of one step, its evaluation, the step; each follow-up: a new step
    (the strategy replans around the instruction), then the step."""
    out: list[dict] = []
    for n, calls in enumerate(turns):
        plan = [{"id": n + 1, "name": f"Turn {n + 1}", "detail": "the user's request"}]
        out.append(step(call("submit_plan", steps=plan, rationale="one step")))
        if n == 0:
            out.append(step(call("submit_evaluation", score=0.9, reasons="fine")))
        out += [step(*[model_call(c) for c in calls]),
                step(call("step_result", status="done", summary="done", files=[]))]
    return out


async def run_one(client, task_queue, model_server, s3, strategy: str,
                  script: list[dict]) -> runner.Run:
    opts = runner.Options(prefix=f"s{task_queue[3:]}", strategies=[strategy],
                          task_queue=task_queue, wait_seconds=120, poll_seconds=0.2)
    case = cases.load_case("multi_turn_base_3")  # 2 turns
    model_server.set_script(runner.job_id(opts, case, strategy), script)
    async with running_worker(client, task_queue):
        [r] = await runner.run_cases(client, s3, opts, [case], None, log=lambda t: None)
    return r


async def test_a_phase_alternation_job(client, task_queue, model_server, s3):
    """With the workspace tools its ritual writes its planning files with."""
    r = await run_one(client, task_queue, model_server, s3, "phase_alternation",
                      phase_alternation(truth("multi_turn_base_3")))
    assert r.valid and r.status == "completed" and r.reached == 2, r
    assert r.model_calls == len(model_server.requests(r.job_id))
    # the protocol's fewest model calls per turn (docs/benchmarks.md): the bootstrap's or a
    # transition's strategic calls, the tactical step, the closing strategic phase
    assert (r.turn_calls, r.first_domain_call) == ([11, 8], [7, 4])
    assert_control_tools(model_server.requests(r.job_id), "phase_alternation")


async def test_a_plan_revise_execute_job(client, task_queue, model_server, s3):
    """With no workspace tools at all; each turn after the first a plan stage of its own
    (PlanReviseExecute.follow_up), the earlier plan's done steps kept done."""
    r = await run_one(client, task_queue, model_server, s3, "plan_revise_execute",
                      plan_revise_execute(truth("multi_turn_base_3")))
    requests = model_server.requests(r.job_id)
    assert not {t["function"]["name"] for q in requests for t in q.get("tools", [])} & {
        "read_file", "write_file", "list_files", "search_files"}
    assert r.valid and r.status == "completed" and r.reached == 2, r
    # the fewest calls per turn: plan (and its evaluation in turn 1), the step, its result
    assert (r.turn_calls, r.first_domain_call) == ([4, 3], [2, 1])
    assert_control_tools(requests, "plan_revise_execute")


def assert_control_tools(requests: list[dict], strategy: str) -> None:
    """The report's table of what each contender is shown (contenders.py) names the tools a
    job's requests carried beside BFCL's functions and the file tools."""
    from switchback_bfcl import contenders
    from switchback_bfcl.tools import SCHEMAS
    sent = {t["function"]["name"] for q in requests for t in q.get("tools", [])}
    files = {"read_file", "write_file", "list_files", "search_files"}
    assert sent - set(SCHEMAS) - files == set(contenders.CONTROL_TOOLS[strategy])


def state_tools(case: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from switchback_bfcl.tools import SCHEMAS
    return {n: SCHEMAS[n] for n in cases.tool_names(case, 0)}


def test_the_job_config_per_strategy() -> None:
    case = cases.load_case("multi_turn_base_0")
    opts = runner.Options(prefix="p", config={"llm": {"endpoint": "local"},
                                              "tools": {"deferred": []}}, model="qwen-x")
    for strategy in runner.STRATEGIES:
        cfg = runner.job_config(opts, case, strategy)
        assert cfg["extends"] == "defaults" and cfg["strategy"] == strategy
        assert cfg["follow_up"] == {"wait_seconds": 900, "max_turns": 4}
        assert cfg["llm"] == {"endpoint": "local", "model": "qwen-x"}
        resolved = load_config(cfg, policy=False).config  # the engine takes it
        assert resolved.tools.domain == cases.tool_names(case, 0)
        # no tool that writes (or reads) files, but where the strategy's ritual writes them
        writes = strategy in runner.WRITES_PLANNING_FILES
        assert ("write_file" in resolved.tools.workspace) == writes
        assert resolved.tools.workspace == ([] if not writes else
                                            ["read_file", "write_file", "list_files",
                                             "search_files"])
        tactical = resolved.tools.for_phase(  # the case's functions, no file tool
            "tactical", resolved.phase_settings.tactical_workspace)
        assert not {"read_file", "write_file", "list_files"} & set(tactical)
        assert set(cases.tool_names(case, 0)) <= set(tactical)
    assert runner.job_config(runner.Options(prefix="p"), case, "react")["extends"] == "defaults"
    assert runner.job_id(opts, case, "react") == "p-multi_turn_base_0-react"
    deferred = load_config(runner.job_config(runner.Options(prefix="p", deferred=True), case,
                                             "react"), policy=False).config.tools
    assert deferred.deferred == deferred.domain == cases.tool_names(case, 0)


def searched(turns: list[list[str]]) -> list[dict]:
    """Per turn: a tool_search by each function's name the turn calls, one model step each,
    then the calls in one step, then job_complete (react with deferred tools)."""
    out = []
    for calls in turns:
        names = list(dict.fromkeys(state.call_arguments(c)[0] for c in calls))
        out += [step(call("tool_search", query=n)) for n in names]
        if calls:
            out.append(step(*[model_call(c) for c in calls]))
        out.append(DONE)
    return out


async def test_deferred_tools_keep_the_schemas_out_until_searched(
        client, task_queue, model_server, s3) -> None:
    """`--deferred`: the job's first prompt offers none of the case's functions, only
    tool_search; the model loads each by name and calls it; the run is as valid as with
    every schema sent, and the searches are no calls of BFCL's record."""
    case = cases.load_case("multi_turn_base_1")
    opts = runner.Options(prefix=f"d{task_queue[3:]}", strategies=["react"], baseline=False,
                          task_queue=task_queue, wait_seconds=120, poll_seconds=0.2,
                          deferred=True)
    model_server.set_script(runner.job_id(opts, case, "react"),
                            searched(truth(case["id"])))
    async with running_worker(client, task_queue):
        [r] = await runner.run_cases(client, s3, opts, [case], None, log=lambda t: None)
    assert (r.status, r.reached, r.valid) == ("completed", r.turns, True), r
    first = model_server.requests(r.job_id)[0]
    assert sorted(t["function"]["name"] for t in first["tools"]) == ["job_complete",
                                                                     "tool_search"]
    recorded = json.loads(await s3.get("switchback", f"{r.job_id}/{state.CALLS_PATH}"))
    assert recorded["turns"] == truth(case["id"])


async def test_miss_func_adds_the_withheld_function_in_its_turn(
        client, task_queue, model_server, s3) -> None:
    """A job starts without the function BFCL withholds (`sort`, turn 4 of 5); the turn that
    adds it is an `instruct` with it as a tool, and the ground truth calls it there: valid.
    Offered from the start, the model could call it in turn 3, where BFCL expects none."""
    case = cases.load_case("multi_turn_miss_func_0")
    assert "sort" not in cases.tool_names(case, 2) and "sort" in cases.tool_names(case, 3)
    assert runner.instruction(case, 2) == cases.turn_text(case, 2)
    assert runner.instruction(case, 3) == {"instruction": cases.turn_text(case, 3),
                                           "tools": ["sort"]}
    opts = runner.Options(prefix=f"m{task_queue[3:]}", strategies=["react"], baseline=False,
                          task_queue=task_queue, wait_seconds=120, poll_seconds=0.2)
    model_server.set_script(runner.job_id(opts, case, "react"),
                            answers(truth(case["id"]), DONE))
    async with running_worker(client, task_queue):
        [r] = await runner.run_cases(client, s3, opts, [case], None, log=lambda t: None)
    assert (r.status, r.reached, r.valid) == ("completed", 5, True), r
    offered = [{t["function"]["name"] for t in q["tools"]}
               for q in model_server.requests(r.job_id)]
    assert "sort" not in offered[0] and "sort" in offered[-1]


def test_the_command_is_registered_and_checks_its_arguments() -> None:
    from importlib.metadata import entry_points
    found = [ep for ep in entry_points(group="switchback.commands") if ep.name == "bfcl"]
    assert found and found[0].load() is cli.bfcl
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    a = parser.parse_args(["--categories", "base,miss_param", "--cases", "2", "--config",
                           '{"llm": {"endpoint": "local"}}', "--id", "x"])
    opts, selected = cli.options(a)
    # the categories take turns: a command stopped early has as many cases of each
    assert [c["id"] for c in selected] == ["multi_turn_base_0", "multi_turn_miss_param_0",
                                           "multi_turn_base_1", "multi_turn_miss_param_1"]
    assert opts.baseline and list(opts.strategies) == list(runner.STRATEGIES)
    assert opts.config == {"llm": {"endpoint": "local"}} and opts.prefix == "x"
    opts, selected = cli.options(parser.parse_args(["--ids", "multi_turn_long_context_3",
                                                    "--no-baseline", "--strategies", "react"]))
    assert [c["id"] for c in selected] == ["multi_turn_long_context_3"] and not opts.baseline
    assert len(cli.options(parser.parse_args(["--cases", "all"]))[1]) == 200
    for bad in (["--categories", "composite"], ["--strategies", "nested"], ["--cases", "0"],
                ["--ids", "multi_turn_base_999"], ["--config", "{oops"],
                ["--strategies", "", "--no-baseline"]):
        with pytest.raises(CommandError):
            cli.options(parser.parse_args(bad))
    assert cli.CATEGORIES == cases.CATEGORIES and cli.STRATEGIES == runner.STRATEGIES


async def test_the_command_runs_a_case_and_writes_the_report(client, task_queue, model_server,
                                                             s3, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    prefix = f"c{task_queue[3:]}"
    argv = ["--ids", "multi_turn_base_3", "--strategies", "react", "--id", prefix, "--out",
            str(tmp_path), "--task-queue", task_queue, "--wait-seconds", "60"]
    a = parser.parse_args(argv)
    case = cases.load_case("multi_turn_base_3")
    model_server.set_script(f"{prefix}-multi_turn_base_3-react", answers(truth(case["id"]), DONE))
    model_server.set_script(f"{prefix}-multi_turn_base_3-baseline",
                            answers(truth(case["id"]), step(content="Done.")))
    async with running_worker(client, task_queue):
        assert await cli.run(client, a) == 0
    out = capsys.readouterr().out
    assert "| base | react | 100% | 1 / 1 |" in out and "| base | baseline | 100% | 1 / 1 |" in out
    assert (tmp_path / f"{prefix}.md").is_file()
    runs = json.loads((tmp_path / f"{prefix}.json").read_text())["runs"]
    assert [(r["strategy"], r["valid"]) for r in runs] == [("react", True), ("baseline", True)]
    record = runner.record_path(tmp_path, prefix)
    assert len(record.read_text().splitlines()) == 2

    # the same id again: the recorded runs are not run again (no model request, no job)
    calls = {s: len(model_server.requests(f"{prefix}-multi_turn_base_3-{s}"))
             for s in ("react", "baseline")}
    async with running_worker(client, task_queue):
        assert await cli.run(client, a) == 0
    out = capsys.readouterr().out
    assert "2 runs recorded in" in out and "started " not in out
    assert "| base | react | 100% | 1 / 1 |" in out and "| base | baseline | 100% | 1 / 1 |" in out
    assert calls == {s: len(model_server.requests(f"{prefix}-multi_turn_base_3-{s}"))
                     for s in ("react", "baseline")}
    assert len(record.read_text().splitlines()) == 2

    # other options under the same id: refused, nothing runs
    other = parser.parse_args([*argv, "--job-timeout", "99"])
    with pytest.raises(CommandError, match=r"job_timeout was 7200"):
        await cli.run(client, other)

    # a job the record lacks (its command was killed before recording it) is ended and its
    # case run again under a new id: it lost the turns no command sent meanwhile
    record.write_text(record.read_text().splitlines()[1] + "\n")  # the baseline's line only
    model_server.set_script(f"{prefix}-multi_turn_base_3-react-r2",
                            answers(truth(case["id"]), DONE))
    async with running_worker(client, task_queue):
        assert await cli.run(client, a) == 0
    out = capsys.readouterr().out
    assert "1 runs recorded in" in out and f"started {prefix}-multi_turn_base_3-react-r2" in out
    assert "unrecorded: ended; the case runs again" in out
    assert [json.loads(line)["job_id"] for line in record.read_text().splitlines()] == [
        f"{prefix}-multi_turn_base_3-baseline", f"{prefix}-multi_turn_base_3-react-r2"]


def test_a_stopped_command_leaves_a_record_and_a_fair_table(tmp_path) -> None:
    def run(case: str, strategy: str, valid: bool) -> runner.Run:
        return runner.Run(case, "base", strategy, f"x-{case}-{strategy}", 2, "completed", 2,
                          valid, model_calls=3, tokens_in=10, tokens_out=2, wall_seconds=1.0)

    record = runner.record_path(tmp_path, "x")
    finished = [run("multi_turn_base_0", "react", True),
                run("multi_turn_base_0", "baseline", False),
                run("multi_turn_base_1", "react", True)]  # stopped before base_1's baseline
    for r in finished:
        runner.append_record(record, r)
    with record.open("a") as f:
        f.write('{"case_id": "multi_turn_base_1", "strat')  # a write cut short by the kill
    assert list(runner.read_record(record).values()) == finished
    later = run("multi_turn_base_1", "baseline", True)  # the resumed command's first run
    runner.append_record(record, later)
    assert list(runner.read_record(record).values()) == [*finished, later]

    md, js = runner.write_report([*finished, later][:3], tmp_path, "x", "t",
                                 ["react", "baseline"])
    report = md.read_text()  # only base_0, which both contenders ran
    assert "| base | react | 100% | 1 / 1 |" in report
    assert "| base | baseline | 0% | 0 / 1 |" in report
    assert "1 case(s) not yet run by every contender are left out" in report
    assert len(json.loads(js.read_text())["runs"]) == 3


def test_the_baseline_keeps_bfcls_step_limit() -> None:
    from bfcl_eval.constants.default_prompts import (  # type: ignore[import-untyped]
        MAXIMUM_STEP_LIMIT,
    )
    assert baseline.MAXIMUM_STEP_LIMIT == MAXIMUM_STEP_LIMIT


async def test_the_baseline_gets_the_jobs_time_budget(model_server) -> None:
    """`--job-timeout` bounds the baseline's loop as it bounds a job: stopped where it is,
    scored with the turns it reached."""
    import httpx
    case = cases.load_case("multi_turn_base_4")
    turns = truth(case["id"])
    script = answers(turns[:1], step(content="Done."))
    script.append({**step(model_call(turns[1][0])), "latency_ms": 5000})  # turn 2 hangs
    model_server.set_script("slow-baseline", script)
    ep = baseline.endpoint_of(runner.base_config(runner.Options(prefix="slow")))
    async with httpx.AsyncClient() as http:
        run = await baseline.run_case(http, ep, case, "slow-baseline", timeout=2.5)
    assert run.status == "timeout" and run.wall_seconds < 4.5
    assert run.turns == [turns[0], []] and run.result is not None
    assert run.result.error is not None
    assert run.result.error["error_type"] == "multi_turn:force_terminated"


def test_a_turn_not_finished_is_not_right() -> None:
    """A run stopped inside a turn (a timeout, BFCL's step limit) gets no credit for it,
    even where its calls so far agree with the ground truth."""
    turns = truth("multi_turn_base_0")
    stopped = runner.Run("multi_turn_base_0", "base", "baseline", "x", 4, "timeout", 2)
    runner._score(stopped, "multi_turn_base_0", [turns[0], turns[1]])
    assert not stopped.valid and stopped.turns_right == 1
    ended = runner.Run("multi_turn_base_0", "base", "react", "y", 4, "completed", 2)
    runner._score(ended, "multi_turn_base_0", [turns[0], turns[1]])  # two turns finished
    assert not ended.valid and ended.turns_right == 2


def test_a_record_of_the_earlier_tool_sets_is_not_continued(tmp_path) -> None:
    """bfcl-local-1's options (written before TOOL_SETS 2: phase_alternation's tactical phases
    had the file tools) do not match a command now, whatever its other options."""
    opts = runner.Options(prefix="p", job_timeout=600.0, wait_seconds=300)
    path = tmp_path / "p.options.json"
    path.write_text(json.dumps({"config": "defaults", "model": None, "job_timeout": 600.0,
                                "wait_seconds": 300, "deferred": False}), encoding="utf-8")
    assert runner.same_options(path, opts) == "tool_sets was null, calls_per_turn was null"
    fresh = tmp_path / "q.options.json"
    assert runner.same_options(fresh, opts) == "" and runner.same_options(fresh, opts) == ""
    assert json.loads(fresh.read_text())["tool_sets"] == runner.TOOL_SETS
