"""History per model call, early and late in a long phase (conversation by reference).

One job whose tactical phase runs 60 model steps, each writing ~2 KB. For each
model step of that phase, the history bytes and events it added (from the
scheduling of its model call to the scheduling of the next) are measured from
the finished job's history. Flat numbers mean the history per step does not
grow with the conversation.

    python -m switchback.bench.history_growth
"""

from __future__ import annotations

import asyncio
import statistics
import uuid

from switchback.bench.harness import bench_stack, machine_line
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step

STEPS = 60
CONTENT = ("lorem ipsum dolor sit amet " * 80)[:2000]


def script() -> list[dict]:
    work = [step(call("write_file", path=f"work/part_{i:03d}.md", content=f"{i} {CONTENT}"))
            for i in range(STEPS - 5)]
    work += [step(call("todo_complete", notes=f"todo {i}")) for i in range(1, 6)]
    return bootstrap("Long phase", 5) + work + finish()


async def measure() -> dict:
    async with bench_stack() as b:
        tq, job = f"bench-{uuid.uuid4().hex[:6]}", f"history-{uuid.uuid4().hex[:6]}"
        b.model.set_script(job, script())
        async with running_worker(b.client, tq):
            handle = await b.client.start_workflow(
                "AgentJob", JobInput(config="creator", instructions="bench", documents=[]),
                id=job, task_queue=tq, result_type=JobResult)
            result = await handle.result()
        history = await handle.fetch_history()
    marks = []  # (step number, cumulative bytes, event count) at each tactical model call
    total = 0
    for n, e in enumerate(history.events):
        if e.HasField("activity_task_scheduled_event_attributes"):
            label = e.user_metadata.summary.data.decode().strip('"')
            if label.startswith("phase 2 tactical step "):  # "... step 7 · todo 1. ..."
                marks.append((int(label.split()[4]), total, n))
        total += e.ByteSize()
    per_step = {s: (marks[i + 1][1] - b_, marks[i + 1][2] - n_)
                for i, (s, b_, n_) in enumerate(marks[:-1])}
    largest = max(e.ByteSize() for e in history.events)
    return {"result": result, "per_step": per_step, "total": total,
            "events": len(history.events), "largest": largest}


def main() -> None:
    m = asyncio.run(measure())
    ps = m["per_step"]
    print(f"history growth, conversation by reference - {machine_line()}")
    print(f"job: {m['result'].phases} phases, {m['result'].steps} model steps, "
          f"{m['result'].tool_calls} tool calls; tactical phase of {STEPS} steps, 2 KB writes")
    print(f"{'step of phase':>14} {'history bytes':>14} {'events':>7}")
    for s in (5, 50):
        print(f"{s:>14} {ps[s][0]:>14} {ps[s][1]:>7}")
    print(f"{'median 1-59':>14} {statistics.median(b for b, _ in ps.values()):>14.0f}")
    print(f"whole job: {m['total']} bytes, {m['events']} events, largest event "
          f"{m['largest']} bytes")


if __name__ == "__main__":
    main()
