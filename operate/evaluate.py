"""`starter.py eval`: the same jobs N times under each strategy, against the configured endpoint.

    python starter.py eval --config notes --runs 3 [--strategies phase_alternation,react]
                           [--concurrency 1] [--id PREFIX] [--out reports] [--undeclared]
                           [--record docs/evals] [--job-timeout S] [--profile small|none]
    python starter.py eval --config 'heldout-*' --runs 2 ...   several configs: one record

Every run is an ordinary job (`<prefix>-<strategy>-<n>`, with several configs
`<prefix>-<config>-<strategy>-<n>`; config `{"extends": <config>, "strategy": <strategy>}`;
`--undeclared` adds `"deliverables": []`: the job as a user who declares none would run it;
`--profile` sets `llm.profile`): durable, visible in the web UI, at most `--concurrency` at a
time, run 1 of every config and strategy before run 2. A config folder's `turn-2.md`,
`turn-3.md`, ... are its follow-up instructions: each is sent (`instruct`) once the job has
completed the turn before and waits for the next (the config's `follow_up.wait_seconds`).
A job still running `--job-timeout` seconds after its start is cancelled and counted as a run
that timed out: a failure, in the denominator like every stopped run.

Each finished run is checked with the job's own checker (`configs/<config>/check.py <workspace
folder>`, exit status 0 = success; or `configs/<config>/expected.yaml`: `{path: [text the file
must contain, ...]}`; or `--check`), on a copy of its workspace kept in
`<out>/<prefix>/<job id>/` (the job's conversations and records under `.switchback/` with it:
what to read when a run fails). Measured per run: status, who ended a completed job (`ended
by`: the model's job_complete or the workflow), checked, model calls (assistant messages
stored, plus summaries), prompt / completion tokens and the prompt tokens the endpoint served
from its cache (`usage.prompt_tokens_details.cached_tokens`), cost (the config's prices, or
`--price-in`/`--price-out`), wall time (the workflow's start to close).

The record (operate/eval_record.py) goes to `--record DIR` (docs/evals, to commit it; default
`--out`): `<prefix>.runs.jsonl`, one line per run as it ends, and `<prefix>.json` (the
options, the commit of the checkout that ran it, the tables, every run) and `<prefix>.md`.
Started again with the same `--id`, eval runs only what the record lacks (a job that exists
in Temporal is taken up, not started again), and refuses when its options or the code it
runs changed since the record began. The chart goes to `<out>/<prefix>.png`
(operate/eval_report.py).
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import CancelledError, WorkflowAlreadyStartedError

from switchback.operate import CliError, eval_record, records
from switchback.operate.client import job_workspace, ui_link
from switchback.operate.eval_report import OUTCOMES
from switchback.operate.turns import await_end
from switchback.workflows.contract import WORKFLOW_TYPE, JobInput, JobResult, layout

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
TURN_FILE = re.compile(r"^turn-(\d+)\.md$")  # a config's follow-up instruction for turn N


@dataclass
class Run:
    strategy: str
    n: int
    job_id: str
    config: str = ""
    commit: str = ""  # the commit of the checkout that ran it (records.checkout)
    status: str = "running"  # the job's end, or `timeout` (cancelled at --job-timeout)
    ended_by: str = ""  # a completed job: "model" (job_complete) or "workflow"
    checked: bool = False  # the checker passed on the workspace (whatever the job's status)
    success: bool = False  # completed and checked
    outcome: str = ""  # success | false completion | missed completion | other (OUTCOMES)
    check: str = ""  # what the checker said
    model_calls: int = 0
    summaries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    tool_calls: int = 0
    phases: int = 0
    turns: int = 0  # turns the job was given: the first and each follow-up it took
    cost_usd: float = 0.0
    wall_seconds: float = 0.0


def strategies_arg(value: str | None) -> list[str]:
    from switchback.workflows.strategies import (
        REGISTRY,  # what this code base has (more after merges)
    )

    names = [s.strip() for s in value.split(",") if s.strip()] if value else sorted(REGISTRY)
    unknown = [s for s in names if s not in REGISTRY]
    if unknown:
        raise CliError(f"--strategies: unknown {', '.join(unknown)} (known: "
                       f"{', '.join(sorted(REGISTRY))})", 2)
    return names


def configs_arg(value: str) -> list[str]:
    """`--config`: names, comma-separated, each maybe a glob over the config folders
    (`heldout-*`), in the order given (a glob's matches sorted)."""
    names: list[str] = []
    for part in (p.strip() for p in value.split(",") if p.strip()):
        found = sorted(d.name for d in CONFIGS.iterdir() if (d / "config.yaml").is_file()
                       and fnmatch.fnmatchcase(d.name, part)) if any(
            c in part for c in "*?[") else [part]
        if not found:
            raise CliError(f"--config: no config matches {part!r}", 2)
        names += [n for n in found if n not in names]
    if not names:
        raise CliError("--config: name at least one config", 2)
    return names


def follow_ups(config: str) -> dict[int, str]:
    """The config's follow-up instructions by turn (`turn-2.md`: the second turn's)."""
    folder = CONFIGS / config
    found = {int(m[1]): f.read_text(encoding="utf-8").strip()
             for f in (folder.iterdir() if folder.is_dir() else ())
             if (m := TURN_FILE.match(f.name))}
    return {n: t for n, t in found.items() if n >= 2 and t}


def checker_for(config: str, check: str | None) -> list[str] | dict[str, list[str]]:
    """The command that checks a workspace folder, or the expected files and contents."""
    if check:
        return [sys.executable, check] if check.endswith(".py") else check.split()
    folder = CONFIGS / config
    if (folder / "check.py").is_file():
        return [sys.executable, str(folder / "check.py")]
    if (folder / "expected.yaml").is_file():
        data = yaml.safe_load((folder / "expected.yaml").read_text()) or {}
        return {str(k): [str(x) for x in (v or [])] for k, v in data.items()}
    raise CliError(f"config '{config}' has no checker: add configs/{config}/check.py or "
                   "expected.yaml, or pass --check", 2)


def run_checker(checker: list[str] | dict[str, list[str]], folder: Path) -> tuple[bool, str]:
    if isinstance(checker, dict):
        for path, needles in checker.items():
            f = folder / path
            if not f.is_file():
                return False, f"{path} is missing"
            text = f.read_text(errors="replace")
            for needle in needles:
                if needle not in text:
                    return False, f"{path} does not contain {needle!r}"
        return True, f"{len(checker)} files as expected"
    proc = subprocess.run([*checker, str(folder)], capture_output=True, text=True, timeout=120)
    said = " ".join((proc.stdout + proc.stderr).split())[:300]
    return proc.returncode == 0, said


async def download(s3, where: tuple[str, str], folder: Path) -> dict[str, dict]:
    """The workspace's files (`where`: bucket, prefix) into `folder` (the job's own records,
    conversations among them, too: what a person reads to see why a run failed); the stored
    messages (by key). S3 keys are no file system: a key that is also the folder of others
    (`notes` beside `notes/a.md`: the 1.5B model wrote a file named as its notes' folder) is
    saved as `notes~file`, a name taken already gets a number, and a file that cannot be
    written is left out rather than losing the run's report."""
    bucket, prefix = where
    messages: dict[str, dict] = {}
    kept: list[tuple[str, str]] = []  # (key, its path under `folder`)
    for o in await s3.list(bucket, f"{prefix}/"):
        parts = [p for p in o.key[len(prefix) + 1:].split("/") if p]
        if parts and not {".", ".."} & set(parts):  # never outside `folder`
            kept.append((o.key, "/".join(parts)))
    folders = layout.folders_of(rel for _, rel in kept)
    taken: set[str] = set()
    for key, rel in kept:
        data = await s3.get(bucket, key)
        if data is None:
            continue
        if layout.is_internal(rel):
            if rel.startswith(f"{layout.INTERNAL}/conversations/") and rel.endswith(".json"):
                messages[rel] = json.loads(data)
            elif rel.endswith(".md") and "/summary_" in rel:
                messages[rel] = {"role": "summary"}
        name = f"{rel}~file" if rel in folders else rel
        n = 1
        while name in taken or name in folders:
            n, name = n + 1, f"{rel}~{n}"
        taken.add(name)
        try:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        except OSError:
            continue  # (a path this file system refuses)
    return messages


def measure(run: Run, messages: dict[str, dict], prices: tuple[float, float]) -> None:
    for m in messages.values():
        if m.get("role") == "summary":
            run.summaries += 1
        elif m.get("role") == "assistant":
            run.model_calls += 1
            usage = (m.get("_meta") or {}).get("usage") or {}
            run.prompt_tokens += int(usage.get("prompt_tokens", 0))
            run.completion_tokens += int(usage.get("completion_tokens", 0))
            run.cached_tokens += int(usage.get("cached_tokens", 0))
    run.cost_usd = round((run.prompt_tokens * prices[0] + run.completion_tokens * prices[1])
                         / 1e6, 6)


def job_id(prefix: str, config: str, strategy: str, n: int, several: bool) -> str:
    return "-".join([prefix, *([config] if several else []), strategy.replace("_", "-"),
                     str(n)])


def job_config(a: argparse.Namespace, config: str, strategy: str) -> dict:
    """The inline config of a run: the config, the strategy and what the options change."""
    return {"extends": config, "strategy": strategy,
            **({"deliverables": []} if getattr(a, "undeclared", False) else {}),
            **({"llm": {"profile": a.profile}} if getattr(a, "profile", None) else {})}


async def one(client: Client, s3, a: argparse.Namespace, run: Run, checker,
              sem: asyncio.Semaphore, log) -> Run:
    turns = follow_ups(run.config)
    async with sem:
        try:
            handle = await client.start_workflow(  # an existing one, even closed, is taken up
                WORKFLOW_TYPE, JobInput(config=job_config(a, run.config, run.strategy)),
                id=run.job_id, task_queue=a.task_queue, result_type=JobResult,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
            log(f"started {run.job_id}  {ui_link(client, run.job_id)}")
        except WorkflowAlreadyStartedError:
            handle = client.get_workflow_handle(run.job_id, result_type=JobResult)
            log(f"taking up {run.job_id} (it exists)")
        deadline = None
        if getattr(a, "job_timeout", None):  # counted from the job's start (a resumed eval)
            begun = (await handle.describe()).start_time
            age = (time.time() - begun.timestamp()) if begun else 0.0
            deadline = time.monotonic() + a.job_timeout - age
        ended, _ = await await_end(handle, deadline, (lambda t: turns.get(t + 1)) if turns
                                   else None, 2.0, log)
        try:
            result = await handle.result()
            run.status, run.tool_calls, run.phases = result.status, result.tool_calls, \
                result.phases
            if result.status == "completed":
                run.ended_by = result.completed_by or "model"
        except WorkflowFailureError as e:
            run.status = "cancelled" if isinstance(e.cause, CancelledError) else "failed"
            run.check = f"job {run.status}: {' '.join(str(e.cause).split())[:200]}"
        if ended:
            run.status, run.ended_by = ended, ""
            run.check = f"stopped after {a.job_timeout:.0f} s"
    d = await handle.describe()
    if d.close_time and d.start_time:
        run.wall_seconds = round((d.close_time - d.start_time).total_seconds(), 1)
    kept = Path(a.out) / (a.id or "eval") / run.job_id  # the run's workspace, kept to read
    if kept.exists():
        shutil.rmtree(kept)
    messages = await download(s3, await job_workspace(client, run.job_id), kept)
    measure(run, messages, prices_of(a, run.config, messages))
    told = kept / layout.INSTRUCTIONS  # a follow-up turn's instruction is appended to it
    run.turns = 1 + (told.read_text(errors="replace").count(f"\n{layout.FOLLOW_UP_HEADING}")
                     if told.is_file() else 0)
    if kept.exists():  # a job that did not complete may still have the files right
        run.checked, said = run_checker(checker, kept)
        run.check = (f"{run.check}; " if run.check else "") + (
            said or ("ok" if run.checked else "check failed"))
    run.success, run.outcome = run.status == "completed" and run.checked, outcome(run)
    log(f"{run.job_id}: {run.status}, {run.outcome} ({run.check[:120]}), "
        f"{run.model_calls} model calls, {run.wall_seconds:.0f} s")
    return run


def outcome(run: Run) -> str:
    """success: completed and checked; false completion: completed, the check failed;
    missed completion: the check passed, the job did not complete; other: neither."""
    done = run.status == "completed"
    return OUTCOMES[0 if done and run.checked else 1 if done else 2 if run.checked else 3]


def prices_of(a: argparse.Namespace, config: str, messages: dict) -> tuple[float, float]:
    if a.price_in is not None or a.price_out is not None:
        return a.price_in or 0.0, a.price_out or 0.0
    from switchback.activities.config_files import load_config

    llm = load_config({"extends": config}, CONFIGS, policy=False).config.llm
    return llm.price_in_per_mtok, llm.price_out_per_mtok


async def evaluate(client: Client, a: argparse.Namespace) -> int:
    from switchback.activities.storage.s3 import S3Store

    strategies = strategies_arg(a.strategies)
    configs = configs_arg(a.config)
    checkers = {c: checker_for(c, a.check) for c in configs}
    if a.runs < 1 or a.concurrency < 1 or (getattr(a, "job_timeout", None) or 0) < 0:
        raise CliError("--runs and --concurrency must be at least 1, --job-timeout not "
                       "negative", 2)
    a.id = a.id or f"eval-{configs[0]}-{time.strftime('%Y%m%d-%H%M%S')}"
    book = eval_record.Book.open(a, configs)  # refuses a record made otherwise
    several = len(configs) > 1
    # round robin: run 1 of every config and strategy, then run 2, ... (drift hits all alike)
    planned = [Run(s, n, job_id(a.id, c, s, n, several), config=c)
               for n in range(1, a.runs + 1) for c in configs for s in strategies]
    todo = [r for r in planned if r.job_id not in book.runs]
    print(f"eval {a.id}: config {', '.join(configs)}, strategies {', '.join(strategies)}, "
          f"{a.runs} runs each, {a.concurrency} at a time; {len(planned) - len(todo)} of "
          f"{len(planned)} recorded in {book.lines} already", flush=True)
    here = records.checkout()
    sem = asyncio.Semaphore(a.concurrency)
    s3 = S3Store()

    async def go(run: Run) -> None:
        run.commit = here["commit"]
        book.add(await one(client, s3, a, run, checkers[run.config], sem,
                           lambda t: print(t, flush=True)), planned)

    try:
        await asyncio.gather(*(go(r) for r in todo))
    finally:
        s3.close()
    runs = [book.runs[r.job_id] for r in planned if r.job_id in book.runs]
    print(book.write(planned, chart=Path(a.out) / f"{a.id}.png"))
    print(f"\nrecord {book.lines}, summary {book.summary}, table {book.table}")
    return 0 if all(r.success for r in runs) else 1
