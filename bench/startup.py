"""Short jobs: start to first model call, and whole-job overhead (issue #18, item 2).

One stack (Temporal dev server, SeaweedFS, the scripted model, all on free ports) and one
worker in this process (`tests.conftest.running_worker`, as bench.history_growth does). The
jobs are the side-by-side benchmark's switchback job (bench/peers/switchback_job.py): N
scripted `write_file` steps in one tactical phase, plus the bootstrap phase (7 model calls),
the closing phase (4) and the todo completions, all with 0 ms model latency.

For each N, after one warm-up job:

* **start to first model call**: from `start_workflow` returning to the job's first request
  arriving at the scripted model (its handler is wrapped to note the arrival time; the model
  server is a thread of this process, so both ends read the same clock);
* **to first call_model scheduled**: the same span as the server saw it, from the history:
  WorkflowExecutionStarted to the first `call_model` ActivityTaskScheduled;
* **history events before it**, and the activities and markers scheduled before it (listed
  under the table, from the first job of the first N);
* **wall**: from calling `start_workflow` to the result; per write step (wall / N) and per
  model call (wall / model calls).

Each figure is the median of `--runs` jobs.

    python -m switchback.bench.startup [--steps 5,20,50] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from temporalio.client import Client

from switchback.bench.harness import bench_stack, machine_line
from switchback.bench.peers.switchback_job import SwitchbackJob
from switchback.devstack.scripted_model import ScriptedModelServer
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker

TARGET_FIRST_CALL_MS = 150


@dataclass
class Run:
    first_call_ms: float
    first_scheduled_ms: float
    wall_s: float
    model_calls: int
    events_before: int
    before: list[str]


def note_arrivals(model: ScriptedModelServer) -> dict[str, list[float]]:
    """Wrap the scripted model's handler: job id -> perf_counter() of each request."""
    arrivals: dict[str, list[float]] = defaultdict(list)
    complete = model._complete

    def noted(body: dict[str, Any], job_id: str, call_key: str | None) -> Any:
        arrivals[job_id].append(time.perf_counter())
        return complete(body, job_id, call_key)
    setattr(model, "_complete", noted)  # noqa: B010 - an instance method replaced on purpose
    return arrivals


async def before_first_call(client: Client, job_id: str) -> tuple[float, int, list[str]]:
    """From the history: ms from WorkflowExecutionStarted to the first `call_model` scheduled,
    the events before it, and the activities (local ones too) scheduled before it."""
    history = await client.get_workflow_handle(job_id).fetch_history()
    started = history.events[0].event_time.ToDatetime()
    names: list[str] = []
    for n, e in enumerate(history.events):
        if e.HasField("activity_task_scheduled_event_attributes"):
            name = e.activity_task_scheduled_event_attributes.activity_type.name
            if name == "call_model":
                return (e.event_time.ToDatetime() - started).total_seconds() * 1000, n, names
            names.append(name)
        elif e.HasField("marker_recorded_event_attributes"):
            names.append(f"marker:{e.marker_recorded_event_attributes.marker_name}")
    return float("nan"), len(history.events), names


async def one(client: Client, model: ScriptedModelServer, arrivals: dict[str, list[float]],
              queue: str, n: int) -> Run:
    job = SwitchbackJob()
    job_id = f"startup-{n}-{uuid.uuid4().hex[:6]}"
    model.set_script(job_id, job.script(n, 0))
    config = {"extends": "defaults",
              "limits": {"max_steps_per_phase": n + 50}}
    t0 = time.perf_counter()
    handle = await client.start_workflow(
        "AgentJob", JobInput(config=config, instructions=f"Write {n} report sections.",
                             documents=[]),
        id=job_id, task_queue=queue, result_type=JobResult)
    started = time.perf_counter()
    result = await handle.result()
    wall = time.perf_counter() - t0
    if result.status != "completed":
        raise RuntimeError(f"{job_id} ended {result.status}")
    scheduled_ms, events, before = await before_first_call(client, job_id)
    return Run((arrivals[job_id][0] - started) * 1000, scheduled_ms, wall,
               len(arrivals[job_id]), events, before)


async def measure(steps: list[int], runs: int) -> dict[int, list[Run]]:
    out: dict[int, list[Run]] = {n: [] for n in steps}
    async with bench_stack() as b:
        arrivals = note_arrivals(b.model)
        queue = f"bench-{uuid.uuid4().hex[:6]}"
        async with running_worker(b.client, queue):
            await one(b.client, b.model, arrivals, queue, 5)  # warm-up
            for _ in range(runs):
                for n in steps:
                    out[n].append(await one(b.client, b.model, arrivals, queue, n))
    return out


def table(runs: dict[int, list[Run]], rounds: int) -> str:
    def med(rs: list[Run], f: str) -> float:
        return statistics.median(getattr(r, f) for r in rs)
    lines = [f"short jobs, start to first model call - {machine_line()}",
             f"scripted model 0 ms, worker in-process; median of {rounds} jobs; target: start "
             f"to first model call <= {TARGET_FIRST_CALL_MS} ms", "",
             "| write steps N | model calls | start to first model call ms | "
             "to first call_model scheduled (history) ms | history events before it | "
             "wall s | wall / N ms | wall / model call ms |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n, rs in runs.items():
        wall, calls = med(rs, "wall_s"), med(rs, "model_calls")
        lines.append(f"| {n} | {calls:.0f} | {med(rs, 'first_call_ms'):.0f} | "
                     f"{med(rs, 'first_scheduled_ms'):.0f} | {med(rs, 'events_before'):.0f} | "
                     f"{wall:.2f} | "
                     f"{wall * 1000 / n:.1f} | {wall * 1000 / calls:.1f} |")
    first = next(iter(runs.values()))[0]
    lines += ["", "scheduled before the first model call: " + ", ".join(first.before)]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", default="5,20,50")
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    steps = [int(s) for s in a.steps.split(",") if s.strip()]
    print(table(asyncio.run(measure(steps, a.runs)), a.runs))


if __name__ == "__main__":
    main()
