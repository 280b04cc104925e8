"""The same job under each strategy: model calls, tokens, wall time, history.

The job (tests/strategy_scripts.py): write notes/a.md and notes/b.md and a report.md that
joins them. Under each strategy the scripted model answers as a well-behaved model would
under it (no revisions, no failures): phase_alternation's bootstrap, one tactical phase
and its closing phase; react's one conversation; plan_revise_execute's plan, one
evaluation and three steps; nested's coordinator and two react child jobs; auto's
classification routed to react. Every model call sleeps `--latency-ms` in the model
server. Token counts are what the scripted server counted (tiktoken over the real
prompts), so they compare what each strategy sends; wall time is from start to result.
Nested counts its children (calls, tokens, history).

    python -m switchback.bench.strategies [--latency-ms 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from temporalio.client import Client

from switchback.bench.harness import bench_stack, machine_line
from switchback.devstack.scripted_model import ScriptedModelServer
from switchback.workflows.contract import JobInput, JobResult
from tests import strategy_scripts as scripts
from tests.conftest import running_worker

BASE = {"extends": "creator", "phase_settings": {"min_todos": 1, "max_todos": 5}}


@dataclass
class Run:
    calls: int
    tokens_in: int
    tokens_out: int
    seconds: float
    events: int
    history_kb: float
    status: str


def scripted(name: str, job: str) -> dict[str, list[dict]]:
    """The scripts of `job` (and its children) under strategy `name`."""
    if name == "nested":
        parent, children = scripts.nested(job)
        return {job: parent, **children}
    return {job: {"phase_alternation": scripts.phase_alternation, "react": scripts.react,
                  "auto": lambda: scripts.auto("C") + scripts.react(),
                  "plan_revise_execute": lambda: scripts.plan_revise_execute(
                      revise=False, fail_step=False)}[name]()}


async def one(client: Client, model: ScriptedModelServer, queue: str, name: str,
              latency_ms: int) -> Run:
    job = f"{name.replace('_', '-')}-{uuid.uuid4().hex[:6]}"
    jobs = scripted(name, job)
    for wf_id, script in jobs.items():
        model.set_script(wf_id, [{**s, "latency_ms": latency_ms} for s in script])
    t0 = time.perf_counter()
    handle = await client.start_workflow(
        "AgentJob", JobInput(config={**BASE, "strategy": name},
                             instructions=scripts.INSTRUCTIONS, documents=[]),
        id=job, task_queue=queue, result_type=JobResult)
    result = await handle.result()
    seconds = time.perf_counter() - t0
    events = size = 0
    for wf_id in jobs:
        async for wf in client.list_workflows(f'WorkflowId="{wf_id}"'):
            h = await client.get_workflow_handle(wf_id, run_id=wf.run_id).fetch_history()
            events += len(h.events)
            size += sum(e.ByteSize() for e in h.events)
    calls = sum(len({r["_call_key"] for r in model.requests(wf_id)}) for wf_id in jobs)
    return Run(calls, result.tokens_in, result.tokens_out, seconds, events, size / 1024,
               result.status)


async def measure(names: list[str], latency_ms: int, rounds: int) -> dict[str, list[Run]]:
    out: dict[str, list[Run]] = {n: [] for n in names}
    async with bench_stack() as b:
        queue = f"bench-{uuid.uuid4().hex[:6]}"
        async with running_worker(b.client, queue):
            await one(b.client, b.model, queue, "react", latency_ms)  # warm-up
            for _ in range(rounds):
                for name in names:
                    out[name].append(await one(b.client, b.model, queue, name, latency_ms))
    return out


def table(runs: dict[str, list[Run]], latency_ms: int, rounds: int) -> str:
    med: Callable[[list[float]], float] = statistics.median
    lines = [f"strategies on the same job - {machine_line()}",
             f"scripted model, {latency_ms} ms per call; median of {rounds} rounds", "",
             "| strategy | model calls | tokens in | tokens out | wall time s | "
             "history events | history KB |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, rs in runs.items():
        assert all(r.status == "completed" for r in rs), (name, [r.status for r in rs])
        lines.append(f"| {name} | {med([r.calls for r in rs]):.0f} | "
                     f"{med([r.tokens_in for r in rs]):.0f} | "
                     f"{med([r.tokens_out for r in rs]):.0f} | "
                     f"{med([r.seconds for r in rs]):.2f} | {med([r.events for r in rs]):.0f} | "
                     f"{med([r.history_kb for r in rs]):.0f} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--latency-ms", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--strategies", default="phase_alternation,react,plan_revise_execute,"
                   "nested,auto")
    a = p.parse_args()
    names = [n.strip() for n in a.strategies.split(",") if n.strip()]
    print(table(asyncio.run(measure(names, a.latency_ms, a.rounds)), a.latency_ms, a.rounds))


if __name__ == "__main__":
    main()
