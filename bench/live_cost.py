"""What the live stream costs a job's history and the worker's CPU, side by side in one run.

The same job runs once per mode: a tactical phase of STEPS model steps, each answer a
sentence of text and a 2 KB write_file. Streamed (the tokens modes) the text takes
`--reply-ms` to arrive, the call's arguments ~0.6 of that again; not streamed, the answer
comes at once. Per model step of that phase (from its model call's scheduling to the next's,
as bench.history_growth measures) the history bytes and events it added, their median, and
the CPU this process spent per model step (the worker, the scripted model, a reader):

    off              SWITCHBACK_LIVE_RETAIN=0: the workflow publishes nothing
    events           the default: events published by the workflow, nobody reading
    events+query     a reader following the job (operate/live.py, the poll query)
    events+update    a reader long-polling with the stream's update (WorkflowStreamClient)
    events+tokens    live_token_seconds: the model's text in batches (signals), per --intervals

Then what a 2,000-token reply costs with tokens on, from the measured cost of a batch.

    python -m switchback.bench.live_cost [--steps 50] [--reply-ms 1200] [--intervals 0.5,2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import uuid
from typing import Any

from temporalio.api.enums.v1 import EventType

from switchback.bench.harness import bench_stack, machine_line
from switchback.operate.live import job_events
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step

CONTENT = ("lorem ipsum dolor sit amet " * 80)[:2000]
VOCABULARY = ("report part todo check plan write section source table figure claim note "
              "draft review summary detail record entry value result method test case list "
              "order format header footer index scope limit goal risk").split()


def sentence(i: int) -> str:
    """About 140 characters of text, different at every step (the repetition breaker
    watches for near-identical answers)."""
    words = random.Random(i).sample(VOCABULARY, 22)
    return f"Step {i}: " + " ".join(words) + "."


MODES = ("off", "events", "events+query", "events+update")  # then events+tokens per interval


def script(steps: int, chunk_ms: float) -> list[dict]:
    work = [{**step(call("write_file", path=f"work/part_{i:03d}.md", content=f"{i} {CONTENT}"),
                    content=sentence(i)), "chunk_ms": chunk_ms}
            for i in range(steps - 5)]
    work += [{**step(call("todo_complete", notes=f"todo {i}"),
                     content=sentence(1000 + i)), "chunk_ms": chunk_ms}
             for i in range(1, 6)]
    return bootstrap("Long phase", 5) + work + finish()


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def run(b: Any, mode: str, steps: int, chunk_ms: float, interval: float) -> dict:
    tq = f"bench-{uuid.uuid4().hex[:6]}"
    job = f"live-{mode.replace('+', '-').replace(' ', '-')}-{uuid.uuid4().hex[:6]}"
    b.model.set_script(job, script(steps, chunk_ms))
    os.environ["SWITCHBACK_LIVE_RETAIN"] = "0" if mode == "off" else "1000"
    config: dict = {"extends": "creator", "limits": {"max_steps_per_phase": steps + 20}}
    if mode.startswith("events+tokens"):
        config["live_token_seconds"] = interval
    read = 0
    async with running_worker(b.client, tq):
        began = cpu()
        handle = await b.client.start_workflow(
            "AgentJob", JobInput(config=config, instructions="bench", documents=[]),
            id=job, task_queue=tq, result_type=JobResult)
        if mode in ("events+query", "events+update"):
            async for _ in job_events(b.client, job, via="query" if mode == "events+query"
                                      else "update"):
                read += 1
        result = await handle.result()
        spent = cpu() - began
    history = await handle.fetch_history()
    marks, total, signals = [], 0, 0
    for n, e in enumerate(history.events):
        if e.HasField("activity_task_scheduled_event_attributes"):
            label = e.user_metadata.summary.data.decode().strip('"')
            if label.startswith("phase 2 tactical step "):
                marks.append((total, n))
        signals += e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
        total += e.ByteSize()
    per = [(marks[i + 1][0] - b_, marks[i + 1][1] - n_) for i, (b_, n_) in enumerate(marks[:-1])]
    return {"mode": mode, "result": result, "bytes": statistics.median(b for b, _ in per),
            "events": statistics.median(n for _, n in per), "cpu_ms": 1000 * spent / result.steps,
            "signals": signals, "total": total, "history_events": len(history.events),
            "steps": result.steps, "read": read}


async def measure(steps: int, reply_ms: float, intervals: list[float]) -> list[dict]:
    chunk_ms = reply_ms / (len(sentence(0)) / 8)  # 8 characters a chunk (streamed_reply.py)
    async with bench_stack() as b:
        await run(b, "events", 10, 0, 0)  # warm-up (imports, connections): not shown
        rows = [await run(b, mode, steps, chunk_ms, 0) for mode in MODES]
        return rows + [await run(b, f"events+tokens {i:g}s", steps, chunk_ms, i)
                       for i in intervals]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=50, help="model steps of the tactical phase")
    p.add_argument("--reply-ms", type=float, default=1200, help="how long each answer takes")
    p.add_argument("--intervals", default="0.5,2", help="live_token_seconds to measure")
    a = p.parse_args()
    intervals = [float(x) for x in a.intervals.split(",")]
    rows = asyncio.run(measure(a.steps, a.reply_ms, intervals))
    print(f"live stream cost - {machine_line()}")
    print(f"tactical phase of {a.steps} model steps, each answer ~{len(sentence(0))} characters of "
          f"text over {a.reply_ms:.0f} ms + a 2 KB write")
    base = rows[0]
    print(f"{'mode':<19} {'bytes/call':>10} {'x off':>6} {'events/call':>11} {'x off':>6} "
          f"{'CPU ms/step':>11} {'signals':>7} {'job bytes':>10} {'x off':>6} {'job events':>10} "
          f"{'x off':>6} {'steps':>5}")
    for r in rows:
        print(f"{r['mode']:<19} {r['bytes']:>10.0f} {r['bytes'] / base['bytes']:>6.2f} "
              f"{r['events']:>11.0f} {r['events'] / base['events']:>6.2f} {r['cpu_ms']:>11.1f} "
              f"{r['signals']:>7} {r['total']:>10} {r['total'] / base['total']:>6.2f} "
              f"{r['history_events']:>10} {r['history_events'] / base['history_events']:>6.2f} "
              f"{r['steps']:>5}")
    tokens, events = max(rows, key=lambda r: r["signals"]), rows[1]
    if tokens["signals"]:
        per_bytes = (tokens["total"] - events["total"]) / tokens["signals"]
        per_events = (tokens["history_events"] - events["history_events"]) / tokens["signals"]
        for rate in (30, 100):
            seconds = 2000 / rate
            for every in sorted(set(intervals) | {1.0}):
                n = int(seconds // every)
                print(f"a 2,000-token reply at {rate} tokens/s ({seconds:.0f} s), a batch every "
                      f"{every} s: {n} signals, ~{n * per_events:.0f} history events, "
                      f"~{n * per_bytes / 1000:.0f} KB (measured: {per_events:.1f} events, "
                      f"{per_bytes:.0f} bytes a batch)")


if __name__ == "__main__":
    main()
