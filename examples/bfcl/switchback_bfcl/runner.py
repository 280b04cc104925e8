"""Run BFCL multi-turn cases as switchback jobs (and the plain baseline), score and report.

A case under a strategy is an ordinary job, `<prefix>-<case id>-<strategy>`:

- input: config `{"extends": <config>, "strategy": s, "tools": {"workspace": [...],
  "domain": <the case's functions>}, "follow_up": {"wait_seconds": W, "max_turns": <turns>},
  ...}`, instructions = the first user turn, documents = the case (`job_documents`);
- after each completed turn (state `waiting_for_instructions`) the runner sends the next
  user turn with the `instruct` update; the tools read the turn from instructions.md;
- after the last turn (`follow_up.max_turns` = the case's turns) the job ends `completed`
  without waiting;
- a turn may take `calls_per_turn` model calls (budget.py, the same for the baseline): the
  runner counts them from `state` and cancels a job whose turn passes them (`over_budget`:
  that turn not done, the case invalid);
- a job that ends before (stuck, failed, budget) or outlives `job_timeout` (cancelled: a
  safety stop) is scored with what it recorded: BFCL's force-terminated rule fails the turns
  not reached;
- scored with BFCL's checker from the workspace's files (`check.check_files`); model calls
  and tokens from the `state` query (`steps_total`, `tokens`), wall time the workflow's
  start to close.

Workspace tools: react and plan_revise_execute get none (`tools.workspace: []`: the model
cannot touch bfcl/calls.json or read documents/); phase_alternation keeps the config's in
its strategic phases (the ritual writes workspace.md and main_plan.md with write_file), so
there the model could overwrite bfcl/calls.json (a record that no longer parses is scored
invalid, `switchback:bad_workspace`), and none in its tactical phases
(`phase_settings.tactical_workspace: []`, since `TOOL_SETS` 2: with the file tools beside
BFCL's, the 1.5B model listed the workspace for the case's files; bfcl-local-1 ran with
them, 1).

`deferred` (`--deferred`): the case's functions are the job's `tools.deferred` too, so no
schema of them is in the prompt until `tool_search` loads it (the best 3 matches of a query,
for the rest of the phase): BFCL's 18-39 schemas are 5-7k tokens of every prompt otherwise.
The baseline keeps BFCL's way, every schema in every request.

miss_func: a job starts without the withheld functions; the turn that adds them (BFCL's
"I have updated some more functions ...") is an `instruct` with `"tools"`, so the job lists
them from that turn on, as BFCL offers them to a function-calling model.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from switchback.operate.records import append_line, read_lines
from switchback_bfcl import baseline, budget, cases, check, state
from switchback_bfcl.report import Row, finished_cases, summarize, table, write_report

STRATEGIES = ("react", "phase_alternation", "plan_revise_execute")
# strategies whose ritual writes planning files with write_file: they keep the workspace tools
# in their strategic phases, not in their tactical ones
WRITES_PLANNING_FILES = frozenset({"phase_alternation"})
TOOL_SETS = 2  # how jobs get their tools (the docstring): a record holds runs of one only
BASELINE = "baseline"
NOT_FOR_JOBS: dict[str, str] = {}  # category -> why jobs do not run it (the baseline does)


@dataclass
class Options:
    prefix: str
    config: str | dict[str, Any] = "defaults"  # a config name, or an inline config object
    strategies: Sequence[str] = STRATEGIES
    baseline: bool = True
    model: str | None = None  # llm.model for the jobs and the baseline (None: the config's)
    task_queue: str = "switchback"
    wait_seconds: int = 900  # follow_up.wait_seconds: how long a job waits for a turn
    job_timeout: float = 7200.0  # a job or baseline loop still running then: stopped, scored
    poll_seconds: float = 0.5
    concurrency: int = 1  # runs (jobs and baseline cases) at a time
    deferred: bool = False  # the case's functions behind tool_search (the jobs, not the baseline)
    # model calls a turn may take, the one that ends it included, every contender (budget.py)
    calls_per_turn: int = budget.DEFAULT_CALLS_PER_TURN


@dataclass
class Run:
    case_id: str
    category: str
    strategy: str  # a switchback strategy, or "baseline"
    job_id: str
    turns: int  # the case's user turns
    status: str = ""  # completed (every turn) | the job's end | timeout | baseline: force_quit
    reached: int = 0  # turns the run reached
    valid: bool = False
    turns_right: int = 0  # turns from the first that BFCL's checker accepts (check.turns_right)
    error_type: str = ""  # BFCL's verdict when invalid
    error: str = ""
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    wall_seconds: float = 0.0
    skipped: str = ""  # why it did not run
    calls: list[list[str]] = field(default_factory=list)  # the calls per turn, as recorded
    turn_calls: list[int] = field(default_factory=list)  # model calls per turn reached
    # per turn reached: model calls before its first BFCL call (None: it made none)
    first_domain_call: list[int | None] = field(default_factory=list)


def base_config(opts: Options) -> dict[str, Any]:
    """`--config` as an inline config: a name is extended, an object used as it is."""
    cfg: dict[str, Any] = (dict(opts.config) if isinstance(opts.config, dict)
                           else {"extends": opts.config})
    cfg.setdefault("extends", "defaults")
    if opts.model:
        cfg["llm"] = {**(cfg.get("llm") or {}), "model": opts.model}
    return cfg


def job_config(opts: Options, case: dict[str, Any], strategy: str) -> dict[str, Any]:
    """The inline config of the job that runs `case` under `strategy`."""
    cfg = base_config(opts)
    tools = dict(cfg.get("tools") or {})
    tools["domain"] = cases.tool_names(case, 0)
    if opts.deferred:
        tools["deferred"] = list(tools["domain"])
    phases = dict(cfg.get("phase_settings") or {})
    if strategy not in WRITES_PLANNING_FILES:
        tools["workspace"] = []
    else:
        phases["tactical_workspace"] = []
    return {**cfg, "strategy": strategy, "tools": tools,
            **({"phase_settings": phases} if phases else {}),
            "follow_up": {"wait_seconds": opts.wait_seconds,
                          "max_turns": len(case["question"])}}


def instruction(case: dict[str, Any], turn: int) -> str | dict[str, Any]:
    """The `instruct` payload that starts `turn` (>= 1): its user text, with the functions
    BFCL adds in it (miss_func) as the tools the turn adds."""
    before = set(cases.tool_names(case, turn - 1))
    added = [n for n in cases.tool_names(case, turn) if n not in before]
    text = cases.turn_text(case, turn)
    return {"instruction": text, "tools": added} if added else text


def job_id(opts: Options, case: dict[str, Any], strategy: str) -> str:
    return f"{opts.prefix}-{case['id']}-{strategy}"


def _score(run: Run, case_id: str, calls: list[list[str]],
           result: check.CheckResult | None = None) -> None:
    """BFCL's verdict on `calls` as a run of `case_id` (`result` if already known), and the
    turns right."""
    result = result or check.check_calls(case_id, calls)
    run.valid, run.calls = result.valid, calls
    if run.status == budget.OVER_BUDGET:  # a turn not ended within its calls: not done
        run.valid = False
        result = check.CheckResult(False, {
            "error_type": budget.ERROR_TYPE,
            "error_message": f"turn {run.reached} took more model calls than the budget"})
    # a run stopped in a turn (timeout, stuck, the step limit...) did not finish that turn
    finished = run.reached if run.status == "completed" else max(run.reached - 1, 0)
    run.turns_right = (len(calls) if result.valid
                       else min(check.turns_right(case_id, calls), finished))
    if result.error:
        run.error_type = str(result.error.get("error_type", ""))
        run.error = " ".join(json.dumps(result.error.get("error_message", ""),
                                        ensure_ascii=False, default=str).split())[:300]


async def run_job(client: Any, s3: Any, opts: Options, case: dict[str, Any], strategy: str,
                  log: Callable[[str], None] = print) -> Run:
    """Run one case as a switchback job, turn by turn, and score it."""
    from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
    from temporalio.common import WorkflowIDReusePolicy
    from temporalio.exceptions import CancelledError, WorkflowAlreadyStartedError

    from switchback.operate.client import job_workspace
    from switchback.workflows.contract import (
        WORKFLOW_TYPE,
        DocumentSpec,
        JobInput,
        JobResult,
    )

    run = Run(case["id"], cases.category_of(case["id"]), strategy,
              job_id(opts, case, strategy), len(case["question"]))
    inp = JobInput(config=job_config(opts, case, strategy),
                   instructions=cases.turn_text(case, 0),
                   documents=[DocumentSpec(**d) for d in state.job_documents(case)])
    for again in range(2, 100):
        try:
            first = await client.start_workflow(
                WORKFLOW_TYPE, inp, id=run.job_id, task_queue=opts.task_queue,
                result_type=JobResult, id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
            break
        except WorkflowAlreadyStartedError:
            # an earlier command's job that it did not record: it stopped sending turns
            # meanwhile, so the job is ended and the case runs again under a new id
            old = client.get_workflow_handle(run.job_id)
            if (await old.describe()).status == WorkflowExecutionStatus.RUNNING:
                await old.terminate(reason="a resumed bfcl command runs this case again")
            log(f"{run.job_id} exists, unrecorded: ended; the case runs again")
            run.job_id = f"{job_id(opts, case, strategy)}-r{again}"
    log(f"started {run.job_id}")
    # the job's latest run (a continue-as-new starts another); `first` for its start
    handle = client.get_workflow_handle(run.job_id, result_type=JobResult)
    # each next user turn once the job waits for it (BFCL turn st.turn, 0-based, is the
    # job's turn st.turn + 1); stopped over the call budget or at the time limit
    seen = await budget.drive(handle, time.monotonic() + opts.job_timeout,
                              lambda turn: instruction(case, turn), opts.calls_per_turn,
                              set(cases.tool_names(case, len(case["question"]) - 1)),
                              opts.poll_seconds, log)
    ended, last = seen.ended, seen.last
    run.turn_calls, run.first_domain_call = seen.calls, seen.first_domain_call
    failure = ""  # why the job failed
    try:
        result = await asyncio.wait_for(handle.result(), 300)
        run.status = result.status
        run.model_calls, run.tokens_in, run.tokens_out = (result.steps, result.tokens_in,
                                                          result.tokens_out)
    except WorkflowFailureError as e:
        run.status = "cancelled" if isinstance(e.cause, CancelledError) else "failed"
        if run.status == "failed":
            failure = " ".join(str(e.cause).split())[:300]
    except TimeoutError:
        run.status = "not ended"
    run.status = ended or run.status
    if last is not None:
        run.model_calls, run.tokens_in, run.tokens_out = (
            last.steps_total, last.tokens.tokens_in, last.tokens.tokens_out)
    begun, closed = (await first.describe()).start_time, (await handle.describe()).close_time
    if begun and closed:
        run.wall_seconds = round((closed - begun).total_seconds(), 1)

    bucket, prefix = await job_workspace(client, run.job_id)
    files: dict[str, str] = {}
    for path in (state.CASE_PATH, state.INSTRUCTIONS_PATH, state.CALLS_PATH):
        data = await s3.get(bucket, f"{prefix}/{path}")
        if data is not None:
            files[path] = data.decode("utf-8", errors="replace")
    try:
        run.reached = state.turn_of(files.get(state.INSTRUCTIONS_PATH)) + 1
        case_id, calls = check.recorded_turns(files.get(state.CASE_PATH),
                                              files.get(state.INSTRUCTIONS_PATH),
                                              files.get(state.CALLS_PATH))
        await asyncio.to_thread(_score, run, case_id, calls)
    except state.StateError as e:
        run.valid, run.error_type, run.error = False, "switchback:bad_workspace", str(e)[:300]
    if failure:
        run.error = f"job failed: {failure}; {run.error}"
    log(f"{run.job_id}: {run.status}, {'valid' if run.valid else 'invalid'}"
        f"{f' ({run.error_type})' if run.error_type else ''}, turns {run.reached}/"
        f"{run.turns}, {run.model_calls} model calls, {run.wall_seconds:.0f} s")
    return run


async def run_baseline(http: Any, ep: baseline.Endpoint, opts: Options, case: dict[str, Any],
                       log: Callable[[str], None] = print) -> Run:
    """Run one case with the plain loop (baseline.py) and score it."""
    run = Run(case["id"], cases.category_of(case["id"]), BASELINE,
              job_id(opts, case, BASELINE), len(case["question"]))
    done = await baseline.run_case(http, ep, case, run.job_id, opts.job_timeout,
                                   opts.calls_per_turn)
    run.status, run.reached = done.status, len(done.turns)
    run.turn_calls, run.first_domain_call = done.turn_calls, done.first_domain_call
    run.model_calls, run.tokens_in, run.tokens_out = (done.model_calls, done.tokens_in,
                                                      done.tokens_out)
    run.wall_seconds = done.wall_seconds
    assert done.result is not None
    await asyncio.to_thread(_score, run, run.case_id, [list(t) for t in done.turns],
                            done.result)
    if done.error:
        run.error = f"{done.error[:200]}; {run.error}"
    log(f"{run.job_id}: {run.status}, {'valid' if run.valid else 'invalid'}"
        f"{f' ({run.error_type})' if run.error_type else ''}, turns {run.reached}/"
        f"{run.turns}, {run.model_calls} model calls, {run.wall_seconds:.0f} s")
    return run


async def run_cases(client: Any, s3: Any, opts: Options, selected: Sequence[dict[str, Any]],
                    endpoint: baseline.Endpoint | None = None,
                    log: Callable[[str], None] = print,
                    done: Mapping[tuple[str, str], Run] | None = None,
                    on_run: Callable[[Run], None] | None = None) -> list[Run]:
    """Every selected case under every strategy (and the baseline when `endpoint` is
    given), `opts.concurrency` at a time, case by case. A run in `done` (by case id and
    contender: an earlier command's record) is not run again; `on_run` gets each new run as
    it ends."""
    import httpx

    sem = asyncio.Semaphore(opts.concurrency)
    done = done or {}

    async def once(key: tuple[str, str], go: Callable[[], Awaitable[Run]]) -> Run:
        if key in done:
            return done[key]
        async with sem:
            run = await go()
        if on_run is not None:
            on_run(run)
        return run

    async def job(case: dict[str, Any], strategy: str) -> Run:
        category = cases.category_of(case["id"])
        if category in NOT_FOR_JOBS:
            return Run(case["id"], category, strategy, "", len(case["question"]),
                       status="skipped", skipped=NOT_FOR_JOBS[category])
        return await once((case["id"], strategy),
                          lambda: run_job(client, s3, opts, case, strategy, log))

    async def plain(case: dict[str, Any], http: httpx.AsyncClient) -> Run:
        assert endpoint is not None
        return await once((case["id"], BASELINE),
                          lambda: run_baseline(http, endpoint, opts, case, log))

    async with httpx.AsyncClient() as http:
        work = []
        for case in selected:
            work += [job(case, s) for s in opts.strategies]
            if endpoint is not None:
                work.append(plain(case, http))
        return list(await asyncio.gather(*work))


# -- the record: one line per finished run, so a stopped command loses no run -----------------

def record_path(out: Path, prefix: str) -> Path:
    return out / f"{prefix}.runs.jsonl"


# a run that says nothing about its contender: the endpoint failed (the baseline's `error`),
# the job did not end in time to be scored; not recorded, so a resumed command runs it again
NOT_RECORDED = frozenset({"error", "not ended"})


def read_record(path: Path) -> dict[tuple[str, str], Run]:
    """The runs an earlier command with this id recorded, by case id and contender (a line
    cut short by a kill is left out: that run runs again)."""
    runs: dict[tuple[str, str], Run] = {}
    known = set(Run.__dataclass_fields__)
    for data in read_lines(path):
        try:
            run = Run(**{k: v for k, v in data.items() if k in known})
        except TypeError:
            continue
        runs[(run.case_id, run.strategy)] = run
    return runs


def append_record(path: Path, run: Run) -> None:
    append_line(path, asdict(run))


def options_path(out: Path, prefix: str) -> Path:
    return out / f"{prefix}.options.json"


def same_options(path: Path, opts: Options) -> str:
    """'' when the runs recorded under this id were made with `opts`' config, model, time
    limit, wait, tool exposure (`deferred`, `TOOL_SETS`) and call budget (`calls_per_turn`;
    written on the first command), else what differs: runs of two budgets never mix.
    Strategies and cases may differ: a later command can add contenders or cases."""
    mine = {"config": opts.config, "model": opts.model, "job_timeout": opts.job_timeout,
            "wait_seconds": opts.wait_seconds, "deferred": opts.deferred,
            "tool_sets": TOOL_SETS, "calls_per_turn": opts.calls_per_turn}
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(mine, indent=1), encoding="utf-8")
        return ""
    before = json.loads(path.read_text(encoding="utf-8"))
    return ", ".join(f"{k} was {json.dumps(before.get(k))}" for k, v in mine.items()
                     if before.get(k) != json.loads(json.dumps(v)))


def commit_path(out: Path, prefix: str) -> Path:
    return out / f"{prefix}.commit.json"


def same_code(path: Path) -> str:
    """'' when this checkout runs the code the runs recorded under this id ran (the commit
    written on the first command, with its uncommitted changes; docs, tests and README may
    differ), else what changed: one record, one engine and runner (a worker started from
    this checkout, as devstack.real_stack starts it)."""
    from switchback.operate.records import changed_since, checkout

    here = checkout()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(here, indent=1), encoding="utf-8")
        return ""
    before = json.loads(path.read_text(encoding="utf-8"))
    changed = changed_since(str(before.get("commit", "")))
    if changed is None and before.get("commit") != here["commit"]:
        return f"commit {before.get('commit')!r} cannot be compared with this checkout's"
    return (f"code changed since commit {str(before['commit'])[:12]}: "
            f"{', '.join(changed[:5])}" if changed else "")


__all__ = ["BASELINE", "NOT_FOR_JOBS", "NOT_RECORDED", "STRATEGIES", "Options", "Row", "Run",
           "append_record", "base_config", "commit_path", "finished_cases", "instruction",
           "job_config", "job_id", "options_path", "read_record", "record_path",
           "run_baseline", "run_cases", "run_job", "same_code", "same_options", "summarize",
           "table", "write_report"]
