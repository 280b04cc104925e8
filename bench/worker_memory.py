"""Worker memory against concurrent jobs (issue #18, item 3): RSS of one worker.py process.

A real `worker.py` process (its own session, default tuning) polls a task queue of a test
stack on free ports (bench/harness.py: Temporal dev server, SeaweedFS, the scripted model
in this process). For each N of `--jobs`, N AgentJobs are started whose every model step
answers after `--latency-ms` (default 120 s: no job gets past its first model call while the
others start), so they are all in flight at once; once every one of them has made its
first model call, the worker's RSS is sampled from /proc for `--sample-s` seconds
(median and highest), then the N jobs are terminated and the RSS read again after
`--settle-s` seconds (memory kept after the jobs are gone). RSS at idle is taken after the
worker started and before any job.

A job is the side-by-side benchmark's switchback job (bench/peers/switchback_job.py) with 5
write steps (it does not get far: the figures are of jobs waiting on their first model
call). The worker gets activity slots for every job (`SWITCHBACK_MAX_CONCURRENT_ACTIVITIES`
= the largest N + 50; the default, 100, would keep the other jobs' model calls queued on
the server), so every job's model call is in flight in the worker: its workflow cached, its
model activity heartbeating, its HTTP request open.

    python -m switchback.bench.worker_memory [--jobs 1,100,500] [--latency-ms 120000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from switchback.bench.harness import bench_stack, machine_line
from switchback.bench.peers.switchback_job import SwitchbackJob
from switchback.bench.side_by_side import WorkerProcess
from switchback.workflows.contract import JobInput, JobResult

ROOT = Path(__file__).resolve().parents[1]


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM: the peak) of `pid`, MB."""
    found = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, value = line.split(":", 1)
                found[name] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


def start_worker(address: str, task_queue: str, log: Path, slots: int) -> WorkerProcess:
    """worker.py with an activity slot for every job, quiet."""
    env = {**os.environ, "TEMPORAL_ADDRESS": address, "SWITCHBACK_TASK_QUEUE": task_queue,
           "SWITCHBACK_LOG_LEVEL": "WARNING", "PYTHONUNBUFFERED": "1",
           "SWITCHBACK_MAX_CONCURRENT_ACTIVITIES": str(slots)}
    return WorkerProcess([sys.executable, str(ROOT / "worker.py")], log, env)


async def sample(pid: int, seconds: float) -> list[float]:
    out, end = [], time.time() + seconds
    while time.time() < end:
        out.append(rss_mb(pid)[0])
        await asyncio.sleep(0.25)
    return out


async def run_jobs(b: Any, worker: WorkerProcess, task_queue: str, n: int, latency_ms: int,
                   sample_s: float, settle_s: float) -> dict[str, float]:
    job = SwitchbackJob()
    ids = [f"mem-{n}-{uuid.uuid4().hex[:8]}" for _ in range(n)]
    config = {"extends": "defaults", "limits": {"max_steps_per_phase": 60}}
    handles = []
    t0 = time.time()
    for job_id in ids:
        b.model.set_script(job_id, job.script(5, latency_ms))
        handles.append(await b.client.start_workflow(
            "AgentJob", JobInput(config=config, instructions="Write 5 report sections.",
                                 documents=[]), id=job_id, task_queue=task_queue,
            result_type=JobResult))
    while sum(1 for j in ids if b.model.requests(j)) < n:  # every job at its first model call
        if worker.proc.poll() is not None:
            raise RuntimeError(f"worker died:\n{worker.log.read_text()[-3000:]}")
        await asyncio.sleep(0.5)
    all_in = time.time() - t0
    rss = await sample(worker.proc.pid, sample_s)
    calls = sum(len(b.model.requests(j)) for j in ids)
    for h in handles:
        try:
            await h.terminate("benchmark: measured")
        except Exception:  # finished already
            pass
    await asyncio.sleep(settle_s)
    return {"jobs": n, "all in flight after s": all_in, "model calls made": calls,
            "RSS median MB": statistics.median(rss), "RSS max MB": max(rss),
            "RSS after terminate MB": rss_mb(worker.proc.pid)[0]}


async def measure(counts: list[int], latency_ms: int, sample_s: float,
                  settle_s: float) -> tuple[float, list[dict[str, float]], float]:
    async with bench_stack() as b:
        task_queue = f"mem-{uuid.uuid4().hex[:6]}"
        worker = start_worker(b.client.service_client.config.target_host, task_queue,
                              b.tmp / "worker.log", max(counts) + 50)
        try:
            await worker.ready(90)
            await asyncio.sleep(3)
            idle = statistics.median(await sample(worker.proc.pid, 3))
            rows = [await run_jobs(b, worker, task_queue, n, latency_ms, sample_s, settle_s)
                    for n in counts]
            return idle, rows, rss_mb(worker.proc.pid)[1]
        finally:
            worker.stop()


def table(idle: float, rows: list[dict[str, float]], peak: float, latency_ms: int) -> str:
    lines = [f"worker.py RSS against concurrent jobs - {machine_line()}",
             f"model latency {latency_ms} ms a step; RSS at idle {idle:.0f} MB, peak of the "
             f"whole run (VmHWM) {peak:.0f} MB", "",
             "| concurrent jobs | all in flight after s | model calls made | RSS median MB "
             "| RSS max MB | per job MB | RSS after the jobs ended MB |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    first = rows[0]
    for r in rows:
        # the first job also pays the worker's lazy start (imports, clients): per job is
        # measured from the first row on
        per = ((r["RSS median MB"] - first["RSS median MB"]) / (r["jobs"] - first["jobs"])
               if r["jobs"] > first["jobs"] else r["RSS median MB"] - idle)
        lines.append(f"| {r['jobs']:.0f} | {r['all in flight after s']:.1f} | "
                     f"{r['model calls made']:.0f} | {r['RSS median MB']:.0f} | "
                     f"{r['RSS max MB']:.0f} | {per:.2f} | {r['RSS after terminate MB']:.0f} |")
    lines += ["", f"per job: (RSS median - that of {first['jobs']:.0f} jobs) / (N - "
              f"{first['jobs']:.0f}); for the first row, its RSS median - idle"]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", default="1,100,500")
    p.add_argument("--latency-ms", type=int, default=120_000)
    p.add_argument("--sample-s", type=float, default=5)
    p.add_argument("--settle-s", type=float, default=10)
    a = p.parse_args()
    counts = [int(s) for s in a.jobs.split(",") if s.strip()]
    idle, rows, peak = asyncio.run(measure(counts, a.latency_ms, a.sample_s, a.settle_s))
    print(table(idle, rows, peak, a.latency_ms))


if __name__ == "__main__":
    main()
