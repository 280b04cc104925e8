"""Where a model step's CPU goes (issue #18, item 1): S3 requests, history events, py-spy.

One stack on free ports (bench.harness), the worker in this process (as bench.startup), the
side-by-side benchmark's switchback job (bench/peers/switchback_job.py: N `write_file` steps
in a tactical phase, plus the bootstrap and closing phases) at 0 ms model latency. After a
warm-up job, one measured job of `--steps` writes:

* **S3 requests per model call**, by operation and by what the key is (a conversation
  message, the system prompt, a workspace file, todos.yaml, a snapshot, ...), counted at
  `S3Store`'s methods (a GET once: before #18 round 2 `get` and the `get_object` it calls
  were both counted); a conditional request the server refused (412) as `<op> refused`;
* **history events per model call**, by event type, from the finished job's history;
* **CPU**: this process's CPU per model call (worker, client, model server thread), and with
  `--py-spy` a py-spy sample of this process during the measured job (all threads, idle
  excluded): the functions with the most samples, self and inclusive (`--top`).

    python -m switchback.bench.step_profile [--steps 50] [--local-calls] [--py-spy [--gil]]
        [--top 30]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from switchback.bench.harness import bench_stack, machine_line
from switchback.bench.peers.switchback_job import SwitchbackJob, SwitchbackLocal
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker

COUNTED = ("get_object", "head", "put", "delete", "list", "copy")  # (`get` calls get_object)
KINDS = [  # (what, pattern of the key below the job's prefix), first match wins
    ("conversation message", r"\.switchback/conversations/.*/\d+\.json$"),
    ("conversation text", r"\.switchback/conversations/"),
    ("snapshot", r"\.switchback/(snapshots|blobs)/"),
    ("todos marker", r"\.switchback/todos_written"),
    ("tool record", r"\.switchback/tools"),
    ("other .switchback", r"\.switchback/"),
    ("todos.yaml", r"^todos\.yaml$"),
    ("archive", r"^archive/"),
    ("output", r"^output/"),
    ("workspace file", r"."),
]


def kind_of(key: str) -> str:
    rest = key.split("/", 1)[1] if "/" in key else key
    return next((k for k, pat in KINDS if re.search(pat, rest)), "prefix")


def count_s3(counts: collections.Counter) -> None:
    """Count every S3Store request by (operation, kind of key)."""
    from switchback.activities.storage.s3 import PreconditionFailed, S3Store

    for name in COUNTED:
        original = getattr(S3Store, name)

        @functools.wraps(original)
        async def counted(self, bucket, key, *a, _o=original, _n=name, **kw):
            try:
                result = await _o(self, bucket, key, *a, **kw)
            except PreconditionFailed:  # a conditional request the server refused (412)
                counts[(_n + " refused", kind_of(key))] += 1
                raise
            counts[(_n, kind_of(key))] += 1
            return result
        setattr(S3Store, name, counted)


def thread_cpu() -> collections.Counter:
    """CPU clock ticks (user + system; SC_CLK_TCK a second) of this process's threads, by
    name: Python's threads by their Python name (MainThread, the S3 pool `s3`, the model
    server's request threads), the others (the Temporal SDK core's Rust threads) by the
    kernel's. A thread that ended meanwhile is not counted."""
    import threading

    out: collections.Counter = collections.Counter()
    py = {t.native_id: t.name for t in threading.enumerate()}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = py.get(int(task.name)) or (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out[re.sub(r"[-_ ]?\d+$", "", name) or "?"] += int(fields[11]) + int(fields[12])
    return out


def event_kind(e) -> str:
    kind = e.WhichOneof("attributes") or "?"
    kind = kind.removesuffix("_event_attributes")
    if kind == "activity_task_scheduled":
        return f"{kind} ({e.activity_task_scheduled_event_attributes.activity_type.name})"
    if kind == "marker_recorded":
        return f"{kind} ({e.marker_recorded_event_attributes.marker_name})"
    return kind


AREAS = [  # (area, pattern of a frame in the stack), the first match from the leaf wins
    ("not the worker: the scripted model server", r"scripted_model|socketserver|http/server"),
    ("not the worker: the bench's script", r"bench/peers"),
    ("S3 client (s3_wire, urllib3, botocore's credentials, the thread pool)",
     r"botocore|boto3|urllib3|storage/s3(_wire)?\.py"),
    ("model HTTP client (openai, httpx)", r"openai/|httpx|httpcore|h11"),
    ("token counting (tiktoken)", r"tiktoken|model/tokens\.py"),
    ("payload conversion (pydantic, json, protobuf)", r"pydantic|converter|json/"),
    ("workflow code in the sandbox", r"workflow_sandbox|_workflow_instance|workflows/"),
    ("Temporal SDK core bridge (Rust calls)", r"temporalio/bridge"),
    ("Temporal SDK activity worker", r"temporalio/worker/_activity"),
    ("activities (other)", r"activities/"),
    ("event loop, threads (waiting, wake-ups)", r"selectors|asyncio|threading|concurrent/"),
]


def area_of(frames: list[str]) -> str:
    """The first area (in AREAS' order) any frame of the stack belongs to."""
    if re.search(r"_worker \(concurrent/futures/thread\.py:8[01]\)", frames[-1]):
        return "thread pool threads waiting for work"
    for name, pat in AREAS:
        if any(re.search(pat, f) for f in frames):
            return name
    return "other"


def py_spy_top(raw: Path, top: int) -> list[str]:
    """Sample shares per area of the process, and per function (self, inclusive), from
    py-spy's collapsed stacks."""
    own: collections.Counter = collections.Counter()
    incl: collections.Counter = collections.Counter()
    total = 0
    areas: collections.Counter = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack:
            continue
        parts = stack.split(";")
        areas[area_of(parts)] += int(n)
        frames = [re.sub(r" \(.*?/(site-packages|lib/python3\.\d+|wt-[^/]+|base18d)/", " (",
                         f) for f in stack.split(";")]
        total += int(n)
        own[frames[-1]] += int(n)
        for f in set(frames):
            incl[f] += int(n)
    out = [f"py-spy: {total} samples (non-idle, all threads)", "", "| area | % of samples |",
           "| --- | ---: |"]
    out += [f"| {a} | {n * 100 / total:.1f} |" for a, n in areas.most_common()]
    out += ["", "| self % | function |", "| ---: | --- |"]
    out += [f"| {n * 100 / total:.1f} | `{f}` |" for f, n in own.most_common(top)]
    out += ["", "| inclusive % | function |", "| ---: | --- |"]
    out += [f"| {n * 100 / total:.1f} | `{f}` |" for f, n in incl.most_common(top * 2)]
    return out


async def run_job(client, model, queue: str, n: int, job: SwitchbackJob) -> str:
    """The side-by-side benchmark's job (its script and config) of `n` writes."""
    job_id = f"profile-{n}-{uuid.uuid4().hex[:6]}"
    model.set_script(job_id, job.script(n, 0))
    result = await client.execute_workflow(
        "AgentJob", JobInput(config=job.config(n), instructions=f"Write {n} report sections.",
                             documents=[]),
        id=job_id, task_queue=queue, result_type=JobResult)
    if result.status != "completed":
        raise RuntimeError(f"{job_id} ended {result.status}")
    return job_id


async def measure(a: argparse.Namespace) -> str:
    counts: collections.Counter = collections.Counter()
    count_s3(counts)
    calls: collections.Counter = collections.Counter()
    async with bench_stack() as b:
        complete = b.model._complete

        def noted(body, job_id, call_key):
            calls[job_id] += 1
            return complete(body, job_id, call_key)
        setattr(b.model, "_complete", noted)  # noqa: B010 - wrapped on purpose
        queue = f"profile-{uuid.uuid4().hex[:6]}"
        async with running_worker(b.client, queue):
            job = SwitchbackLocal() if a.local_calls else SwitchbackJob()
            await run_job(b.client, b.model, queue, 5, job)  # warm-up
            counts.clear()
            spy, raw = None, Path(tempfile.mkdtemp()) / "py-spy.txt"
            if a.py_spy:
                spy = subprocess.Popen(
                    [str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                     str(os.getpid()), "--format", "raw", "--rate", str(a.rate), "--output",
                     str(raw), "--nonblocking", *(["--gil"] if a.gil else [])],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                await asyncio.sleep(1.0)
            threads0 = thread_cpu()
            cpu0, t0 = time.process_time(), time.perf_counter()
            job_id = await run_job(b.client, b.model, queue, a.steps, job)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
            threads = thread_cpu()
            threads.subtract(threads0)
            if spy:
                spy.send_signal(2)
                spy.wait(30)
            history = await b.client.get_workflow_handle(job_id).fetch_history()
    n = calls[job_id]
    events = collections.Counter(event_kind(e) for e in history.events)
    lines = [f"step profile - {machine_line()}",
             f"switchback job, {a.steps} writes, {n} model calls, 0 ms model; worker in this "
             f"process; wall {wall:.2f} s ({wall * 1000 / n:.1f} ms per model call), CPU of "
             f"this process {cpu * 1000 / n:.1f} ms per model call", "",
             "| threads (by name) | CPU ms per model call |", "| --- | ---: |"]
    tick = os.sysconf("SC_CLK_TCK")
    lines += [f"| {k} | {v * 1000 / tick / n:.1f} |" for k, v in threads.most_common() if v > 0]
    lines += ["",
             f"S3 requests: {sum(counts.values())} ({sum(counts.values()) / n:.2f} per model "
             "call)", "", "| operation | key | requests | per model call |",
             "| --- | --- | ---: | ---: |"]
    lines += [f"| {op} | {kind} | {c} | {c / n:.2f} |"
              for (op, kind), c in sorted(counts.items(), key=lambda x: -x[1])]
    lines += ["", f"history events: {len(history.events)} ({len(history.events) / n:.2f} per "
              "model call)", "", "| event | count | per model call |", "| --- | ---: | ---: |"]
    lines += [f"| {k} | {c} | {c / n:.2f} |" for k, c in events.most_common()]
    if a.py_spy and raw.exists():
        lines += [""] + py_spy_top(raw, a.top)
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--py-spy", action="store_true", help="sample this process with py-spy")
    p.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--local-calls", action="store_true",
                   help="the job opts in to fast model calls as local activities")
    p.add_argument("--gil", action="store_true",
                   help="py-spy samples only the thread holding the GIL (Python CPU, no waits)")
    print(asyncio.run(measure(p.parse_args())), flush=True)


if __name__ == "__main__":
    main()
