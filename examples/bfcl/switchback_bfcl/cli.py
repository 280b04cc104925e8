"""`switchback bfcl` (`starter.py bfcl`): run BFCL multi-turn cases as switchback jobs under
chosen strategies, plus a plain baseline loop, score them with BFCL's checker and write a
report (runner.py, baseline.py). Registered under the entry point group
`switchback.commands`; the parser part imports nothing heavy (it runs for every CLI start).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from switchback.apps import Command, CommandError

CATEGORIES = ("base", "long_context", "miss_func", "miss_param")  # cases.CATEGORIES
STRATEGIES = ("react", "phase_alternation", "plan_revise_execute")  # runner.STRATEGIES


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--categories", default="base",
                   help=f"comma-separated, of {', '.join(CATEGORIES)} (default: base)")
    p.add_argument("--cases", default="10",
                   help="the first N cases of each category, or 'all' (default: 10)")
    p.add_argument("--ids", help="comma-separated case ids (any category); instead of "
                   "--categories/--cases")
    p.add_argument("--strategies", default=",".join(STRATEGIES),
                   help=f"comma-separated, of {', '.join(STRATEGIES)}; '' for none "
                   "(default: all three)")
    p.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True,
                   help="also run the plain function-calling loop in this process against "
                   "the same endpoint (default: on)")
    p.add_argument("--config", default="defaults",
                   help="the config the jobs extend: a name, or an inline JSON object (e.g. "
                   "'{\"llm\": {\"endpoint\": \"local\", \"model\": \"...\"}}'); the "
                   "baseline calls its endpoint and model (default: defaults)")
    p.add_argument("--model", help="llm.model for the jobs and the baseline (default: the "
                   "config's)")
    p.add_argument("--id", help="job id prefix and report name (default: bfcl-<time>); the "
                   "runs a command with this id recorded are not run again (resume)")
    p.add_argument("--out", default="reports", help="directory of the report (default: "
                   "reports)")
    p.add_argument("--concurrency", type=int, default=1,
                   help="runs at a time, jobs and baseline cases (default: 1)")
    p.add_argument("--wait-seconds", type=int, default=900,
                   help="follow_up.wait_seconds of the jobs (default: 900)")
    p.add_argument("--job-timeout", type=float, default=7200,
                   help="seconds after which a job still running is cancelled, or the "
                   "baseline's loop stopped, and scored with what it recorded (default: "
                   "7200)")
    p.add_argument("--calls-per-turn", type=int, default=21,
                   help="model calls a user turn may take, the one that ends it included, for "
                   "every contender; a turn not ended within them stops the run, not done "
                   "(default: 21, BFCL's loop: 20 steps with calls and the answer)")
    p.add_argument("--deferred", action="store_true",
                   help="the jobs find the case's functions with tool_search instead of "
                   "having every schema in every prompt (the baseline keeps them all)")
    p.add_argument("--task-queue", default=os.environ.get("SWITCHBACK_TASK_QUEUE",
                                                          "switchback"),
                   help="the task queue (default: SWITCHBACK_TASK_QUEUE, else switchback)")


def _list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def options(a: argparse.Namespace) -> tuple[Any, list[dict[str, Any]]]:
    """The runner's options and the selected cases, or a CommandError (status 2)."""
    import json
    import time

    from switchback_bfcl import cases, runner

    categories, strategies = _list(a.categories), _list(a.strategies)
    if bad := [c for c in categories if c not in CATEGORIES]:
        raise CommandError(f"--categories: unknown {', '.join(bad)} (known: "
                           f"{', '.join(CATEGORIES)})", 2)
    if bad := [s for s in strategies if s not in STRATEGIES]:
        raise CommandError(f"--strategies: {', '.join(bad)} not supported here (known: "
                           f"{', '.join(STRATEGIES)})", 2)
    if not strategies and not a.baseline:
        raise CommandError("nothing to run: no --strategies and --no-baseline", 2)
    count: int | None = None
    if a.cases != "all":
        try:
            count = int(a.cases)
        except ValueError:
            raise CommandError("--cases: a number or 'all'", 2) from None
        if count < 1:
            raise CommandError("--cases: at least 1", 2)
    if a.concurrency < 1 or a.wait_seconds < 1 or a.job_timeout <= 0 or a.calls_per_turn < 1:
        raise CommandError("--concurrency, --wait-seconds, --job-timeout and --calls-per-turn "
                           "must be positive", 2)
    config: str | dict[str, Any] = a.config
    if a.config.strip().startswith("{"):
        try:
            config = json.loads(a.config)
        except ValueError as e:
            raise CommandError(f"--config: not valid JSON ({e})", 2) from None
    try:
        selected = cases.select(categories, count, _list(a.ids))
    except KeyError as e:
        raise CommandError(f"--ids: {e.args[0]}", 2) from None
    prefix = a.id or f"bfcl-{time.strftime('%Y%m%d-%H%M%S')}"
    return runner.Options(prefix=prefix, config=config, strategies=strategies,
                          baseline=a.baseline, model=a.model, task_queue=a.task_queue,
                          wait_seconds=a.wait_seconds, job_timeout=a.job_timeout,
                          concurrency=a.concurrency, deferred=a.deferred,
                          calls_per_turn=a.calls_per_turn), selected


async def run(client: Any, a: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from switchback.activities.config_files import ConfigError, load_config
    from switchback.activities.model.endpoints import EndpointError
    from switchback.activities.storage.s3 import S3Store
    from switchback_bfcl import baseline, runner

    opts, selected = options(a)
    config = runner.base_config(opts)
    try:  # what the worker would refuse, said before anything starts
        load_config(config, policy=False)
        endpoint = baseline.endpoint_of(config) if opts.baseline else None
    except (ConfigError, EndpointError) as e:
        raise CommandError(f"--config: {e}", 2) from None
    what = ", ".join([*opts.strategies, *(["baseline"] if endpoint else [])])
    print(f"bfcl {opts.prefix}: {len(selected)} cases, {what}, {opts.concurrency} at a time"
          + (f"; baseline: {endpoint.model} at {endpoint.base_url}" if endpoint else ""),
          flush=True)
    out = Path(a.out)
    if changed := runner.same_options(runner.options_path(out, opts.prefix), opts):
        raise CommandError(f"--id {opts.prefix}: its recorded runs were made with other "
                           f"options ({changed}); give another --id", 2)
    if changed := runner.same_code(runner.commit_path(out, opts.prefix)):
        raise CommandError(f"--id {opts.prefix}: its recorded runs were made with other code "
                           f"({changed}); give another --id", 2)
    record = runner.record_path(out, opts.prefix)
    done = runner.read_record(record)
    if done:
        print(f"{len(done)} runs recorded in {record} by an earlier command with this id: "
              "not run again", flush=True)
    contenders = [*opts.strategies, *([runner.BASELINE] if endpoint else [])]
    title = (f"{opts.prefix}: BFCL multi-turn, {len(selected)} cases selected, config "
             f"{a.config}{f', model {opts.model}' if opts.model else ''}, "
             f"{opts.calls_per_turn} model calls per turn"
             f"{', the jobs with deferred tools' if opts.deferred else ''}")
    finished: list[Any] = list(done.values())
    shown = contenders_table(opts, contenders, selected[0])


    def on_run(r: Any) -> None:  # recorded at once, the report rewritten: a stop loses no run
        if r.status in runner.NOT_RECORDED:  # says nothing of its contender: not scored
            print(f"{r.job_id}: not recorded ({r.status}): a command with this id runs it "
                  "again", flush=True)
            return
        runner.append_record(record, r)
        finished.append(r)
        runner.write_report(finished, out, opts.prefix, title, contenders, shown)

    started = time.monotonic()
    s3 = S3Store()
    try:
        runs = await runner.run_cases(client, s3, opts, selected, endpoint,
                                      lambda t: print(t, flush=True), done, on_run)
    finally:
        s3.close()
    scored = [r for r in runs if r.status not in runner.NOT_RECORDED]
    md, js = runner.write_report(scored, out, opts.prefix, title, contenders, shown)
    print()
    print(runner.table(runner.summarize(runner.finished_cases(scored, contenders))))
    print(f"\n{time.monotonic() - started:.0f} s; report {md}, runs {js}, record {record}")
    return 0


def contenders_table(opts: Any, contenders: list[str], case: dict[str, Any]) -> str:
    """What each contender's model is shown (contenders.py), for the report."""
    from switchback_bfcl import contenders as shown
    from switchback_bfcl import runner

    found = shown.rows(lambda c, s: runner.job_config(opts, c, s), contenders, case,
                       opts.calls_per_turn)
    return (f"What each contender's model is shown (the first case's, {case['id']}):\n\n"
            + shown.table(found))


bfcl = Command(help="run BFCL multi-turn cases as jobs under strategies, plus a plain "
               "baseline; score with BFCL's checker", add_arguments=add_arguments, run=run,
               description="Run BFCL multi-turn cases (bfcl-eval) as switchback jobs, one "
               "user turn per follow-up instruction, and as a plain function-calling loop; "
               "score each with BFCL's checker; write a markdown table and JSON "
               "(examples/bfcl/README.md).")
