"""The fault benchmark: concurrent jobs through model faults, worker and server kills, a frozen S3.

    python -m switchback.bench.chaos                        # 20 jobs, 2 workers, S3 frozen for 20 s
    python -m switchback.bench.chaos --jobs 6 --freeze 5    # the small one tests/test_chaos.py runs

Its own stack on free ports: a Temporal dev server with a database file (so it survives a
SIGKILL), SeaweedFS, the scripted model (in this process) and N `python worker.py` processes.

1. Reference run: every job's script without the endpoint faults, nothing else disturbed.
2. Chaos run: the same jobs again (new ids), their scripts with ~10 % model faults in
   between (HTTP 429 with Retry-After, HTTP 500, an answer slower than the call's timeout,
   a tool call with malformed JSON - the model reads the tool error and goes on, so the
   reference has that turn too). As the chaos jobs' model calls pass 10 %, 25 %, 45 %, 65 %
   and 75 % of all, one at a time: worker 0 is SIGKILLed (and restarted, as a Deployment
   would), SeaweedFS is SIGSTOPped for `--freeze` seconds, the Temporal dev server is
   SIGKILLed and restarted, worker 1 is SIGKILLed (and restarted), and for `--jitter`
   seconds every S3 request of the workers is held 0-4 s at random (a slow network: a
   timed-out attempt's write can arrive after its retry's - the zombie write of issue 13).

Every job also calls two side-effect tools in its first tactical phase (tests/tool_package:
each execution is a line in a log, with the call's idempotency key): `test_send`, delivered
at most once, and `test_touch`, at least once (activities/tools/delivery.py).

Prints: jobs completed, jobs lost (failed, or not done by the deadline), workspaces identical
to the reference job's (every file, byte for byte, but `.switchback/`: conversations and
snapshots record attempts and their keys), duplicated archive entries (a todo archived twice,
or an archive file the reference does not have), duplicated effects of the at-most-once tool
(calls executed more than once) and repeated executions of the at-least-once one. Target: all
completed, 0 lost, all identical, 0 duplicates, 0 duplicated at-most-once effects. `run()`
returns the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError

from deploy.local.fleet import (
    ACCESS_KEY,
    PAYLOAD_BUCKET,
    SECRET_KEY,
    kill_worker,
    stack_env,
    start_worker,
    stop_worker,
    wait_worker_started,
    worker_env,
)
from switchback.activities.storage.payloads import data_converter
from switchback.activities.storage.s3 import S3Store
from switchback.activities.storage.snapshots import unkept
from switchback.bench.harness import machine_line
from switchback.devstack.jitter_proxy import Jitter
from switchback.devstack.processes import free_port
from switchback.devstack.scripted_model import ScriptedModelServer
from switchback.devstack.seaweed import SeaweedS3
from switchback.devstack.temporal_server import TemporalDevServer
from switchback.workflows.contract import JobInput, WorkspaceRef
from tests.scripts import bootstrap, call, full_job, step

BUCKET = "switchback"
QUEUE = "chaos"
CONFIG = {"extends": "creator",
          "llm": {"heartbeat_timeout_seconds": 2, "timeout_seconds": 4,
                  "retry": {"maximum_attempts": 30, "maximum_interval_seconds": 10}},
          "workspace": {"retry": {"maximum_attempts": 30}},
          "breakers": {"no_progress_steps": 0},
          "tools": {"domain": ["test_send", "test_touch"],  # side effects, counted
                    "retry": {"maximum_attempts": 10}}}
SLOW_MS = 6000  # a timeout fault: slower than llm.timeout_seconds


@dataclass
class Figures:
    jobs: int
    completed: int = 0
    lost: list[str] = field(default_factory=list)
    identical: int = 0
    different: dict[str, list[str]] = field(default_factory=dict)
    duplicates: int = 0
    effects_at_most_once: int = 0  # calls of the at-most-once tool executed
    duplicated_at_most_once: int = 0  # ... more than once (target 0)
    repeated_at_least_once: int = 0  # extra executions of at-least-once calls (retries)
    unknown_outcomes: int = 0  # at-most-once calls answered unknown_outcome
    unrestorable: list[str] = field(default_factory=list)  # snapshot versions neither live nor kept
    faults: dict[str, int] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    retried: int = 0
    seconds: float = 0.0

    def lines(self) -> list[str]:
        return [
            f"jobs completed:              {self.completed} / {self.jobs}",
            f"jobs lost:                   {len(self.lost)}"
            + (f" ({', '.join(self.lost)})" if self.lost else ""),
            f"workspaces identical:        {self.identical} / {self.jobs} (to the fault-free "
            "run of the same jobs)",
            f"duplicated archive entries:  {self.duplicates}",
            f"at-most-once effects:        {self.effects_at_most_once} calls, "
            f"{self.duplicated_at_most_once} executed twice or more; "
            f"{self.unknown_outcomes} reported unknown_outcome",
            f"at-least-once repeats:       {self.repeated_at_least_once} extra executions "
            "(retried calls; a deduplicating service absorbs them by the idempotency key)",
            f"snapshot versions lost:      {len(self.unrestorable)} (every phase snapshot of "
            "every job restores: each version it names is live or kept)"
            + (f": {', '.join(self.unrestorable[:5])}" if self.unrestorable else ""),
            f"model faults injected:       {sum(self.faults.values())} "
            f"({', '.join(f'{k} {v}' for k, v in sorted(self.faults.items()))})",
            f"retried activity attempts:   {self.retried}",
            f"chaos run:                   {self.seconds:.0f} s",
        ]


def scripts(jobs: int, phases: int, seed: int) -> list[tuple[list[dict], list[dict], dict]]:
    """Per job: (chaos script, reference script, faults injected by kind)."""
    out = []
    for n in range(jobs):
        rnd = random.Random(seed * 1000 + n)
        base = full_job(phases)
        first_tactical = len(bootstrap())  # the side effects, counted (module docstring)
        base.insert(first_tactical, step(call("test_send", message=f"job {n}"),
                                         call("test_touch", message=f"job {n}")))
        for s, st in enumerate(base):  # fixed ids; usage fixed too: a retried call's answer
            st["usage"] = {"prompt_tokens": 1000 + s, "completion_tokens": 50}  # has new ids
            for i, c in enumerate(st.get("tool_calls", [])):
                c["id"] = f"c{s}_{i}"
        chaos: list[dict] = []
        ref: list[dict] = []
        faults = {"429": 0, "500": 0, "timeout": 0, "malformed": 0}
        for s, st in enumerate(base):
            if rnd.random() < 0.10:
                kind = rnd.choice(sorted(faults))
                faults[kind] += 1
                if kind == "429":
                    chaos.append({"error": {"status": 429, "retry_after": 1}})
                elif kind == "500":
                    chaos.append({"error": {"status": 500, "message": "injected"}})
                elif kind == "timeout":
                    chaos.append({"content": "too late", "latency_ms": SLOW_MS, "bind": False})
                else:  # the model sees the error and goes on: the reference has it too
                    bad: dict = {"tool_calls": [{"name": "write_file", "id": f"m{s}",
                                           "arguments": '{"path": "x.md", "content": '}],
                           "usage": {"prompt_tokens": 900 + s, "completion_tokens": 20}}
                    chaos.append(bad)
                    ref.append(bad)
            chaos.append(st)
            ref.append(st)
        out.append((chaos, ref, faults))
    return out


class Stack:
    """Temporal (database file), SeaweedFS, the scripted model, N workers; free ports."""

    def __init__(self, root: Path, workers: int, latency_ms: int) -> None:
        self.root, self.n_workers = root, workers
        self.temporal = TemporalDevServer(free_port(), free_port(),
                                          db_file=str(root / "temporal.db"),
                                          log_path=str(root / "temporal.log"))
        self.s3 = SeaweedS3(str(root / "s3"), access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                            log_path=str(root / "s3.log"))
        # a retried model call gets the same answer with new tool-call ids, as from a real model
        self.model = ScriptedModelServer(latency_ms=latency_ms, reanswer=True)
        self.jitter: Jitter | None = None
        self.saved_env: dict[str, str | None] = {}
        self.effects = root / "effects.log"  # the side-effect tools' executions
        self.workers: list = []
        self.starts: list[int] = []  # processes started per worker slot (each its own log)
        self.store: S3Store | None = None
        self.client: Client | None = None

    async def start(self) -> None:
        await asyncio.to_thread(self.temporal.start)
        await asyncio.to_thread(self.s3.start)
        await asyncio.to_thread(self.s3.ensure_bucket, PAYLOAD_BUCKET)
        self.model.start()
        mine = {"AWS_ENDPOINT_URL_S3": self.s3.endpoint_url, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1",
                "SWITCHBACK_PAYLOAD_BUCKET": PAYLOAD_BUCKET,
                "SWITCHBACK_TEST_TOOL_LOG": str(self.effects)}
        self.saved_env = {k: os.environ.get(k) for k in mine}  # put back by stop()
        os.environ.update(mine)
        self.store = S3Store(self.s3.endpoint_url)
        self.jitter = Jitter(self.s3.s3_port, 4.0, 1)
        await self.jitter.start()
        self.client = await Client.connect(self.temporal.address,
                                           data_converter=data_converter(self.store))
        self.starts = [0] * self.n_workers
        self.workers = [self._worker(i) for i in range(self.n_workers)]
        for i, w in enumerate(self.workers):
            await asyncio.to_thread(wait_worker_started, w, self._log(i), 90)

    def _log(self, i: int) -> Path:
        return self.root / f"worker-{i}.{self.starts[i]}.log"

    def _worker(self, i: int):
        self.starts[i] += 1
        assert self.jitter is not None  # the workers reach S3 through the jitter proxy
        env = worker_env(stack_env(self.temporal.port, self.jitter.port, self.model.port, QUEUE))
        return start_worker(env, self._log(i))

    async def kill_worker(self, i: int) -> None:
        await asyncio.to_thread(kill_worker, self.workers[i])
        self.workers[i] = self._worker(i)
        await asyncio.to_thread(wait_worker_started, self.workers[i], self._log(i), 90)

    async def freeze_s3(self, seconds: float) -> None:
        assert self.s3.proc is not None
        os.killpg(self.s3.proc.pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(seconds)
        finally:
            os.killpg(self.s3.proc.pid, signal.SIGCONT)

    async def kill_temporal(self) -> None:
        proc = self.temporal.proc
        assert proc is not None
        os.killpg(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 30)
        self.temporal.proc = None
        await asyncio.to_thread(self.temporal.start, 90)

    async def stop(self) -> None:
        for w in self.workers:
            await asyncio.to_thread(stop_worker, w)
        self.model.stop()
        if self.jitter is not None:
            self.jitter.close()
        if self.store is not None:
            self.store.close()
        for server in (self.s3, self.temporal):
            if server.proc is not None:  # a frozen S3 would not stop
                os.killpg(server.proc.pid, signal.SIGCONT)
            await asyncio.to_thread(server.stop)
        for k, v in self.saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


async def run_jobs(stack: Stack, ids: list[str], steps: list[list[dict]],
                   timeout: float, chaos=None) -> dict[str, str]:
    """Start the jobs, run `chaos` alongside, wait for each: id -> final status."""
    assert stack.client is not None
    for job_id, script in zip(ids, steps, strict=True):
        stack.model.set_script(job_id, script)
        await stack.client.start_workflow("AgentJob", JobInput(
            config=CONFIG, instructions="# A job\nDo the work.", documents=[]), id=job_id,
            task_queue=QUEUE)
    disruptions = asyncio.ensure_future(chaos()) if chaos else None
    status: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while len(status) < len(ids) and time.monotonic() < deadline:
        for job_id in ids:
            if job_id in status:
                continue
            try:  # the server may be down (restarting): ask again later
                desc = await stack.client.get_workflow_handle(job_id).describe()
            except Exception:
                continue
            if desc.status != WorkflowExecutionStatus.RUNNING:
                status[job_id] = desc.status.name if desc.status else "?"
                if desc.status == WorkflowExecutionStatus.FAILED:
                    status[job_id] += f" ({await failure(stack.client, job_id)})"
        await asyncio.sleep(1)
    if disruptions is not None:  # jobs that end early leave a disruption unmet: not waited for
        if not disruptions.done():
            disruptions.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await disruptions
    return {job_id: status.get(job_id, "NOT DONE") for job_id in ids}


async def failure(client: Client, job_id: str) -> str:
    try:
        await client.get_workflow_handle(job_id).result()
    except WorkflowFailureError as e:
        return " ".join(str(e.cause).split())[:160]
    return "?"


async def workspace(s3: S3Store, job_id: str) -> dict[str, bytes]:
    keys = [o.key for o in await s3.list(BUCKET, f"{job_id}/")]
    return {k.split("/", 1)[1]: await s3.get(BUCKET, k) or b"" for k in keys
            if not k.split("/", 1)[1].startswith(".switchback/")}


def describe(path: str, mine: bytes | None, theirs: bytes | None) -> str:
    """A differing file, and for YAML/JSON files the top-level keys that differ."""
    if mine is None or theirs is None:
        return f"{path} ({'missing' if mine is None else 'extra'})"
    try:
        a, b = yaml.safe_load(mine), yaml.safe_load(theirs)
        keys = [f"{k}: {a.get(k)!r} vs {b.get(k)!r}" for k in sorted(set(a) | set(b))
                if a.get(k) != b.get(k)]
        return f"{path} ({'; '.join(keys)[:300]})"
    except Exception:
        return path


def archive_duplicates(files: dict[str, bytes], reference: dict[str, bytes]) -> int:
    entries = [(name, t.get("id")) for name, body in files.items()
               if name.startswith("archive/")
               for t in (yaml.safe_load(body) or {}).get("todos", [])]
    extra = {n for n in files if n.startswith("archive/")} - set(reference)
    return len(entries) - len(set(entries)) + len(extra)


def count_effects(figures: Figures, log: Path) -> None:
    """The side-effect tools' executions in the chaos run, per call (idempotency key)."""
    per_call: dict[tuple[str, str], int] = {}
    for line in (log.read_text().splitlines() if log.exists() else []):
        tool, key = (line.split(" ", 2) + ["", ""])[:2]
        per_call[(tool, key)] = per_call.get((tool, key), 0) + 1
    sends = [n for (tool, _), n in per_call.items() if tool == "test_send"]
    touches = [n for (tool, _), n in per_call.items() if tool == "test_touch"]
    figures.effects_at_most_once = len(sends)
    figures.duplicated_at_most_once = sum(1 for n in sends if n > 1)
    figures.repeated_at_least_once = sum(n - 1 for n in touches)


async def retried_attempts(client: Client, job_id: str) -> int:
    n = 0
    async for e in client.get_workflow_handle(job_id).fetch_history_events():
        if e.HasField("activity_task_started_event_attributes"):
            n += max(0, e.activity_task_started_event_attributes.attempt - 1)
    return n


async def run(jobs: int = 20, workers: int = 2, freeze: float = 20, phases: int = 3,
              latency_ms: int = 500, seed: int = 13, timeout: float = 900, jitter: float = 15,
              state_dir: Path | None = None, out=print) -> Figures:
    plan = scripts(jobs, phases, seed)
    figures = Figures(jobs=jobs)
    for _, _, faults in plan:
        for k, v in faults.items():
            figures.faults[k] = figures.faults.get(k, 0) + v
    with tempfile.TemporaryDirectory(prefix="switchback-chaos-") as tmp:
        stack = Stack(Path(state_dir or tmp), workers, latency_ms)
        try:
            await stack.start()
            out(f"stack up: Temporal {stack.temporal.address} (db file), SeaweedFS "
                f"{stack.s3.endpoint_url}, {workers} workers; reference run of {jobs} jobs ...")
            ref_ids = [f"ref-{n:03d}" for n in range(jobs)]
            stack.model.set_latency(0)
            ref = await run_jobs(stack, ref_ids, [r for _, r, _ in plan], timeout)
            if any(s != "COMPLETED" for s in ref.values()):
                raise RuntimeError(f"the reference run did not complete: {ref}")
            if stack.effects.exists():  # the chaos run's effects are counted on their own
                stack.effects.rename(stack.effects.with_name("effects-reference.log"))
            stack.model.set_latency(latency_ms)
            ids = [f"chaos-{n:03d}" for n in range(jobs)]
            total = sum(len(c) for c, _, _ in plan)
            t0 = time.monotonic()

            def progress() -> float:
                return sum(len(stack.model.requests(i)) for i in ids) / total

            async def at(share: float, what: str, act) -> None:
                while progress() < share:
                    await asyncio.sleep(0.2)
                started = time.monotonic()
                await act()
                figures.events.append(f"{what} at {started - t0:.1f} s ({share:.0%} of the "
                                      f"model calls), took {time.monotonic() - started:.1f} s")
                out(f"  {figures.events[-1]}")

            async def chaos() -> None:
                await at(0.10, "worker 0 SIGKILLed and restarted", lambda: stack.kill_worker(0))
                await at(0.25, f"SeaweedFS SIGSTOPped for {freeze:.0f} s",
                         lambda: stack.freeze_s3(freeze))
                await at(0.45, "Temporal SIGKILLed and restarted", stack.kill_temporal)
                await at(0.65, "worker 1 SIGKILLed and restarted",
                         lambda: stack.kill_worker(1 % workers))
                assert stack.jitter is not None
                await at(0.75, f"S3 requests held 0-4 s at random for {jitter:.0f} s",
                         lambda: stack.jitter.hold(jitter))
            out(f"chaos run: {jobs} jobs, {total} scripted answers ...")
            done = await run_jobs(stack, ids, [c for c, _, _ in plan], timeout, chaos)
            figures.seconds = time.monotonic() - t0
            assert stack.store is not None and stack.client is not None
            for job_id, ref_id in zip(ids, ref_ids, strict=True):
                if done[job_id] != "COMPLETED":
                    figures.lost.append(f"{job_id}: {done[job_id]}")
                    continue
                figures.completed += 1
                mine, theirs = (await workspace(stack.store, job_id),
                                await workspace(stack.store, ref_id))
                differ = sorted(p for p in set(mine) | set(theirs)
                                if mine.get(p) != theirs.get(p))
                if differ:
                    figures.different[job_id] = [describe(p, mine.get(p), theirs.get(p))
                                                 for p in differ]
                else:
                    figures.identical += 1
                figures.duplicates += archive_duplicates(mine, theirs)
                figures.unrestorable += [f"{job_id} {u}" for u in await unkept(
                    stack.store, WorkspaceRef(bucket=BUCKET, job_id=job_id))]
                figures.retried += await retried_attempts(stack.client, job_id)
            count_effects(figures, stack.effects)
            figures.unknown_outcomes = sum(
                1 for job_id in ids for r in stack.model.requests(job_id)[-1:]
                for m in r.get("messages", []) if m.get("role") == "tool"
                and str(m.get("content", "")).startswith("Error [unknown_outcome]"))
        finally:
            await stack.stop()
    return figures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m switchback.bench.chaos",
                                description=__doc__.split("\n")[0])
    p.add_argument("--jobs", type=int, default=20)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--freeze", type=float, default=20, help="seconds SeaweedFS stays stopped")
    p.add_argument("--phases", type=int, default=3, help="tactical phases per job")
    p.add_argument("--latency-ms", type=int, default=500, help="per model answer")
    p.add_argument("--jitter", type=float, default=15,
                   help="seconds S3 requests are held 0-4 s at random (reordered)")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--timeout", type=float, default=900)
    args = p.parse_args(argv)
    print(f"bench.chaos - {machine_line()}")
    figures = asyncio.run(run(args.jobs, args.workers, args.freeze, args.phases,
                              args.latency_ms, args.seed, args.timeout, args.jitter))
    print("\n".join(figures.lines()))
    for job_id, paths in figures.different.items():
        print(f"  {job_id} differs from its reference in: {', '.join(paths[:8])}")
    ok = (figures.completed == figures.jobs and figures.identical == figures.jobs
          and not figures.duplicates and not figures.unrestorable
          and not figures.duplicated_at_most_once)
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
