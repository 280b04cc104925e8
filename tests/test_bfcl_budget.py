"""The BFCL runner's call budget (examples/bfcl/switchback_bfcl/budget.py): every contender
gets the same model calls per user turn; a turn not ended within them stops the run and is
not done, for a job (the runner counts its calls from `state` and cancels it) and for the
plain loop alike; the calls before a turn's first BFCL call are counted; a record of one
budget is never continued with another. Needs bfcl-eval and the package (as
tests/test_bfcl_runner.py)."""

from __future__ import annotations

import json

import httpx

from switchback_bfcl import baseline, budget, cases, runner
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_bfcl_runner import DONE, answers, model_call, truth

CASE = "multi_turn_base_3"  # 2 turns; turn 1's answer is one call


def test_a_record_of_one_budget_is_not_continued_with_another(tmp_path) -> None:
    path = runner.options_path(tmp_path, "p")
    assert runner.same_options(path, runner.Options(prefix="p", calls_per_turn=21)) == ""
    assert json.loads(path.read_text())["calls_per_turn"] == 21
    assert runner.same_options(path, runner.Options(prefix="p", calls_per_turn=21)) == ""
    assert runner.same_options(path, runner.Options(prefix="p", calls_per_turn=8)) == (
        "calls_per_turn was 21")


def test_calls_before_the_first_domain_call() -> None:
    steps = {4: "job_complete summary", 5: "todo_write phase, todo_complete",
             6: "ls a=True, todo_complete", 7: "no tool call"}
    assert budget.called_names(steps[5]) == ["todo_write", "todo_complete"]
    assert budget.first_domain(steps, 3, 7, {"ls", "cd"}) == 2  # steps 4 and 5 before it
    assert budget.first_domain(steps, 6, 7, {"ls"}) is None


async def test_the_plain_loop_stops_at_the_budget(model_server) -> None:
    """Within the budget the loop is BFCL's; a turn whose calls do not end by the budget's
    last call stops the case there, not done; a call of no BFCL function before the first
    BFCL call counts as a call before it."""
    case = cases.load_case(CASE)
    ep = baseline.endpoint_of(runner.base_config(runner.Options(prefix="b")))
    first = [step(call("not_a_bfcl_function", x=1)), step(model_call(truth(CASE)[0][0])),
             step(content="Done.")]
    model_server.set_script("budget-fits", first + answers(truth(CASE)[1:],
                                                           step(content="Done.")))
    model_server.set_script("budget-over", first[:2] + [step(model_call("pwd()"))] * 3)
    async with httpx.AsyncClient() as http:
        fits = await baseline.run_case(http, ep, case, "budget-fits", calls_per_turn=3)
        over = await baseline.run_case(http, ep, case, "budget-over", calls_per_turn=3)
    assert fits.status == "completed" and fits.turn_calls == [3, 2], fits
    assert fits.first_domain_call == [1, 0] and fits.result is not None and fits.result.valid
    assert over.status == budget.OVER_BUDGET and over.turn_calls == [3], over
    assert len(model_server.requests("budget-over")) == 3  # nothing after the budget
    scored = runner.Run(CASE, "base", runner.BASELINE, "x", 2, over.status, 1)
    runner._score(scored, CASE, over.turns)
    assert not scored.valid and scored.error_type == budget.ERROR_TYPE
    assert scored.turns_right == 0


async def test_a_job_is_stopped_at_the_budget(client, task_queue, model_server, s3) -> None:
    """A react job that keeps calling past the budget in turn 1 is cancelled there and
    scored as not done; the same case within the budget (its turns' calls exactly the
    budget) is valid; both count the calls before the first BFCL call."""
    case = cases.load_case(CASE)
    opts = runner.Options(prefix=f"g{task_queue[3:]}", strategies=["react"], baseline=False,
                          task_queue=task_queue, wait_seconds=120, poll_seconds=0.1,
                          calls_per_turn=3)
    over = runner.Options(**{**opts.__dict__, "prefix": f"o{task_queue[3:]}"})
    fits = [step(content="Let me look."), step(model_call(truth(CASE)[0][0])), DONE,
            *answers(truth(CASE)[1:], DONE)]
    model_server.set_script(runner.job_id(opts, case, "react"), fits)
    busy = [step(content="Let me look."), step(model_call("pwd()")), step(model_call("ls()")),
            *[{**step(model_call(f"cd(folder='d{n}')")), "latency_ms": 1500}
                   for n in range(40)]]  # a minute of calls: the cancel lands well within
    model_server.set_script(runner.job_id(over, case, "react"), busy)
    async with running_worker(client, task_queue):
        [ok] = await runner.run_cases(client, s3, opts, [case], None, log=lambda t: None)
        [stopped] = await runner.run_cases(client, s3, over, [case], None, log=lambda t: None)
    assert (ok.status, ok.valid, ok.turn_calls) == ("completed", True, [3, 2]), ok
    assert ok.first_domain_call == [1, 0]
    assert stopped.status == budget.OVER_BUDGET and not stopped.valid, stopped
    assert stopped.error_type == budget.ERROR_TYPE and stopped.reached == 1
    assert stopped.turn_calls[0] > 3 and stopped.first_domain_call == [1]
    # the job was cancelled before its script ran out (how soon the cancel lands depends
    # on the machine's load: calls past the budget are not scored, whatever their number)
    outcome = await client.get_workflow_handle(stopped.job_id).describe()
    assert outcome.status is not None and outcome.status.name == "CANCELED"


def test_the_report_shows_what_each_contender_is_shown(tmp_path) -> None:
    """The plain loop: no system prompt, BFCL's functions only; phase_alternation: its file
    tools in the strategic phases; every contender the same call budget. The report carries
    the table and the calls-to-first-BFCL-call median."""
    from switchback_bfcl import cli, contenders
    case = cases.load_case(CASE)
    opts = runner.Options(prefix="t", calls_per_turn=9)
    found = {r["contender"]: r for r in contenders.rows(
        lambda c, s: runner.job_config(opts, c, s), [*runner.STRATEGIES, runner.BASELINE],
        case, opts.calls_per_turn)}
    n = len(cases.tool_names(case, 0))
    assert found["baseline"]["system prompt"].startswith("none")
    assert (found["baseline"]["control tools"], found["baseline"]["file tools"]) == ([], [])
    assert found["phase_alternation"]["file tools"][-1] == "(strategic phases only)"
    assert found["react"]["file tools"] == [] and found["react"]["control tools"] == [
        "job_complete"]
    assert {r["BFCL functions"] for r in found.values()} == {n}
    assert {r["calls per turn"] for r in found.values()} == {9}
    text = cli.contenders_table(opts, [*runner.STRATEGIES, runner.BASELINE], case)
    local = runner.Options(prefix="t", config={"llm": {"endpoint": "local"}})
    [react] = contenders.rows(lambda c, s: runner.job_config(local, c, s), ["react"], case, 21)
    assert react["profile"] == "small"  # the endpoint's, as the worker loads the config
    assert "| baseline | none (BFCL sends none" in text and "| 0 | 0 | an answer" in text

    def run(strategy: str, first: list[int | None], status: str = "completed") -> runner.Run:
        return runner.Run(CASE, "base", strategy, f"x-{strategy}", 2, status, 2,
                          model_calls=6, first_domain_call=first, turn_calls=[3, 3])
    md, js = runner.write_report([run("react", [1, 4]), run("react", [2, None]),
                                  run("baseline", [0, 0], budget.OVER_BUDGET)],
                                 tmp_path, "t", "t", preface=text)
    report = md.read_text()
    assert "| base | react | 0% | 0 / 2 |" in report and "| 12 | 0 | 2 | 1 |" in report
    assert "| base | baseline | 0% | 0 / 1 |" in report and "| 6 | 1 | 0 | 0 |" in report
    assert report.index("| contender |") < report.index("| category |")
    rows = {r["strategy"]: r for r in json.loads(js.read_text())["rows"]}
    assert rows["react"]["first_domain_median"] == 2 and rows["react"]["first_domain_call"] == [
        1, 4, 2]


def test_a_record_of_other_code_is_not_continued(tmp_path) -> None:
    """The first command writes the checkout's commit; a later one runs only from code equal
    to it outside docs/, tests/ and README.md."""
    from switchback.operate.records import checkout
    path = runner.commit_path(tmp_path, "p")
    assert runner.same_code(path) == "" and runner.same_code(path) == ""
    assert json.loads(path.read_text())["commit"] == checkout()["commit"]
    path.write_text(json.dumps({"commit": "de9fdba"}))  # before the call budget
    assert runner.same_code(path).startswith("code changed since commit de9fdba: ")
