"""Short jobs in the side-by-side run (issue #18, item 2): `--short 5,20,50`.

For each contender, on its running worker, after the warm-up: `--short-runs` jobs of each N
in `--short` at 0 ms model latency, one at a time. Per N, medians of:

* **start to first model call (ms)**: from the client's start of the job to the arrival of
  its first request at the scripted model (both stamped with the same machine's clock);
* **whole-job overhead (ms)**: the job's wall time from start to result, minus the model's
  latency (0 here): what the orchestration costs for the whole task of N writes - the
  fixed cost of a job (start, for switchback also its bootstrap and closing phases: it
  makes N + 12 or more model calls where a peer makes N + 1) plus N steps;
* **model calls** of the job.

The table puts the contenders side by side with each one's overhead as a multiple of the
best Temporal peer's (the target of #18: switchback <= 0.5x at 20 steps).
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from typing import Any

from switchback.bench.peers import Contender


async def measure(run: Any, c: Contender, client: Any, tq: str, sizes: list[int],
                  runs: int) -> dict[int, dict]:
    """{N: {first_ms, overhead_ms, calls}} (medians) for contender `c`."""
    out: dict[int, dict] = {}
    for n in sizes:
        first, wall, calls = [], [], []
        for _ in range(runs):
            job_id = f"{c.key}-s{n}-{uuid.uuid4().hex[:8]}"
            await run.model.set_script(job_id, c.script(n, 0))
            t0 = time.time()
            await asyncio.wait_for(c.run_job(client, tq, job_id, n, run.args.heartbeat),
                                   run.args.max_seconds)
            wall.append(time.time() - t0)
            arrivals = await run.model.arrivals(job_id)
            first.append(arrivals[0] - t0)
            calls.append(len(arrivals))
        out[n] = {"first_ms": statistics.median(first) * 1000,
                  "overhead_ms": statistics.median(wall) * 1000,
                  "calls": statistics.median(calls)}
    return out


def table(results: dict[str, dict], titles: dict[str, str], sizes: list[int],
          runs: int) -> str:
    keys = [k for k in results if results[k].get("short")]
    if not keys:
        return ""
    peers = [k for k in keys if k != "floor" and not k.startswith("switchback")]
    lines = [f"short jobs: N writes at 0 ms model latency, median of {runs} jobs each; "
             "overhead = job wall time (start to result)", "",
             "| N | figure | " + " | ".join(titles[k] for k in keys) + " |",
             "| ---: | --- | " + " | ".join("---:" for _ in keys) + " |"]
    for n in sizes:
        def cell(k: str, f: str, n: int = n, fmt: str = "{:.0f}") -> str:
            v = results[k]["short"].get(n, {}).get(f)
            return "-" if v is None else fmt.format(v)
        lines.append(f"| {n} | model calls | " + " | ".join(cell(k, "calls") for k in keys)
                     + " |")
        lines.append(f"| {n} | start to first model call ms | "
                     + " | ".join(cell(k, "first_ms") for k in keys) + " |")
        lines.append(f"| {n} | whole-job overhead ms | "
                     + " | ".join(cell(k, "overhead_ms") for k in keys) + " |")
        best = min((results[k]["short"][n]["overhead_ms"] for k in peers
                    if n in results[k]["short"]), default=None)
        if best:
            lines.append(f"| {n} | overhead / best Temporal peer's | " + " | ".join(
                f"{results[k]['short'][n]['overhead_ms'] / best:.2f}x"
                if n in results[k]["short"] else "-" for k in keys) + " |")
    return "\n".join(lines)
