"""Context and history over a long job: context management on vs off, side by side.

A synthetic scripted job of 31 phases (bootstrap + 15 x (tactical + transition))
and ~1,100 tool calls; every tactical step reads a 8 KB document (large tool
results). It runs twice on the same servers:

- on:  the product's context policy (old tool results cleared, results cut at
       6,000 characters with a pointer, summaries when a prompt passes the
       threshold - 10,000 tokens here instead of the 80,000 default, so that the
       long phases of this job are summarized at all)
- off: `context.enabled: false` - the whole conversation of the phase, nothing
       cleared or cut (phases still start empty: that is the architecture)

Figures per run: prompt tokens per model call (max, mean, total; from the usage
each model call reported), history events and bytes per run of the
continue-as-new chain and in total, history bytes per model call, largest event,
wall time.

    python -m switchback.bench.context_growth
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import uuid

from switchback.bench.harness import bench_stack, machine_line
from switchback.workflows.contract import DocumentSpec, JobInput, JobResult
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, transition

PHASES = 15  # tactical phases
TODOS = 5
READS_PER_TODO = 12
DOC = "".join(f"§ {i}. Records shall be kept for ten years; vouchers for eight years; "
              f"letters for six years. Personal data must be erased when no longer needed.\n"
              for i in range(60))[:8000]


def script() -> list[dict]:
    s = bootstrap("Phase 1", TODOS)
    for p in range(1, PHASES + 1):
        for t in range(1, TODOS + 1):
            s += [step(call("read_file", path=f"documents/doc_{(p * 7 + t * 3 + r) % 20:02d}.md"))
                  for r in range(READS_PER_TODO)]
            s.append(step(call("write_file", path=f"results/p{p:02d}_t{t}.md",
                               content=f"findings of phase {p} todo {t}\n"),
                          call("todo_complete", notes=f"phase {p} todo {t}")))
        s += (transition(f"Phase {p + 1}", TODOS, memory=f"after phase {p}") if p < PHASES
              else finish("done", ["results/p01_t1.md"]))
    summaries = [{"content": f"Summary {k}: sources read so far, findings in results/.",
                  "for_call": "summary"} for k in range(400)]
    return s + summaries


def config(on: bool) -> dict:
    context = ({"summarize_at_tokens": 10_000} if on else {"enabled": False})
    return {"extends": "creator", "context": context,
            "limits": {"max_steps_per_phase": 200}, "breakers": {"no_progress_steps": 0}}


async def run(b, on: bool) -> dict:
    tq, job = f"bench-{uuid.uuid4().hex[:6]}", f"context-{'on' if on else 'off'}-" \
        f"{uuid.uuid4().hex[:6]}"
    steps = script()
    b.model.set_script(job, steps)
    docs: list[str | DocumentSpec] = [DocumentSpec(name=f"doc_{i:02d}.md",
                                                   text=f"# Source {i}\n\n{DOC}")
                                      for i in range(20)]  # inline: jobs name no worker path
    t0 = time.monotonic()
    async with running_worker(b.client, tq):
        handle = await b.client.start_workflow(
            "AgentJob", JobInput(config=config(on), instructions="bench", documents=docs),
            id=job, task_queue=tq, result_type=JobResult)
        result = await handle.result()
    wall = time.monotonic() - t0
    runs, prompts = [], []
    async for wf in b.client.list_workflows(f'WorkflowId="{job}"'):
        history = await b.client.get_workflow_handle(job, run_id=wf.run_id).fetch_history()
        scheduled: dict[int, str] = {}
        model_calls = 0
        for e in history.events:
            if e.HasField("activity_task_scheduled_event_attributes"):
                attrs = e.activity_task_scheduled_event_attributes
                scheduled[e.event_id] = attrs.activity_type.name
            if e.HasField("activity_task_completed_event_attributes"):
                a = e.activity_task_completed_event_attributes
                kind = scheduled.get(a.scheduled_event_id)
                if kind in ("call_model", "summarize_conversation"):
                    reply = json.loads(a.result.payloads[0].data)
                    if reply.get("message_index", 0) != -1:
                        prompts.append(reply["usage"]["prompt_tokens"])
                        model_calls += 1
        runs.append({"events": len(history.events),
                     "bytes": sum(e.ByteSize() for e in history.events),
                     "largest": max(e.ByteSize() for e in history.events),
                     "calls": model_calls, "start": wf.start_time})
    b.model.reset()
    runs.sort(key=lambda r: r["start"])
    return {"on": on, "result": result, "wall": wall, "prompts": prompts, "runs": runs}


def report(r: dict) -> None:
    p, runs = r["prompts"], r["runs"]
    total_bytes, total_events = sum(x["bytes"] for x in runs), sum(x["events"] for x in runs)
    print(f"\ncontext management {'ON' if r['on'] else 'OFF'}: {r['result'].phases} phases, "
          f"{r['result'].steps} model steps, {r['result'].tool_calls} tool calls, "
          f"status {r['result'].status}, wall {r['wall']:.0f} s")
    print(f"  prompt tokens per model call: max {max(p):,}, mean {statistics.mean(p):,.0f}, "
          f"total {sum(p):,} over {len(p)} calls")
    print(f"  history: {len(runs)} runs, {total_events:,} events, {total_bytes:,} bytes in all; "
          f"largest event {max(x['largest'] for x in runs):,} bytes")
    print(f"  {'run':>5} {'events':>8} {'bytes':>11} {'model calls':>12} {'bytes/call':>11}")
    for i, x in enumerate(runs, 1):
        per = x["bytes"] / max(1, x["calls"])
        print(f"  {i:>5} {x['events']:>8,} {x['bytes']:>11,} {x['calls']:>12} {per:>11,.0f}")


async def main() -> None:
    async with bench_stack() as b:
        on = await run(b, True)
        off = await run(b, False)
    print(f"context growth - {machine_line()}")
    report(on)
    report(off)
    print(f"\ntotal prompt tokens off/on: {sum(off['prompts']) / sum(on['prompts']):.1f}x")


if __name__ == "__main__":
    asyncio.run(main())
