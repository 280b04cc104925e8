"""Side by side: switchback against the in-process floor and the Temporal agent integrations.

    python -m switchback.bench.side_by_side --steps 200 --latency-ms 0
    python -m switchback.bench.side_by_side --steps 200 --latency-ms 200 --concurrency 1,10,100,500
    python -m switchback.bench.side_by_side --steps 20 --peers floor,switchback --concurrency 1,10

Contenders (bench/peers/): floor (the same loop in-process), switchback (AgentJob),
openai_agents (OpenAI Agents SDK on Temporal), pydantic_ai (pydantic-ai's Temporal durable
execution). A contender whose packages are missing is listed as skipped (install the `bench`
extra). Every contender runs the same task - N model steps, each one `write_file` of ~2 KB
into S3, then a final answer - against the scripted model server (its own process), on one
Temporal dev server (dynamic config transfer/timer/visibility MaxPollRPS=1000, from
bench/harness.py) and one SeaweedFS. Each Temporal contender's worker is its own process.

Per contender, in order: a 3-step warm-up job; one N-step job at --latency-ms (overhead per
step, history, CPU); C x --rounds jobs of --concurrency-steps steps at
--concurrency-latency-ms, C at a time, for each C of --concurrency; a recovery run (kill the
worker with SIGKILL mid-job, start a new one). bench/README.md explains each figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from switchback.bench import short_jobs
from switchback.bench.harness import bench_stack, machine_line
from switchback.bench.peers import BUCKET, ROOT, Contender, contenders

PAYLOAD = "temporal.api.common.v1.Payload"


class ModelProcess:
    """bench/peers/scripted_server.py as a subprocess, with its admin API."""

    def __init__(self, log: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "switchback.bench.peers.scripted_server"], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=log.open("w"), text=True, start_new_session=True)
        assert self.proc.stdout is not None  # stdout=PIPE
        line = self.proc.stdout.readline()
        if "scripted model server on" not in line:
            raise RuntimeError(f"scripted model server did not start: {line!r}")
        self.base_url = line.split(" on ", 1)[1].strip()
        self.http = httpx.AsyncClient(base_url=self.base_url.removesuffix("/v1"), timeout=60)

    async def set_script(self, job_id: str, steps: list[dict]) -> None:
        r = await self.http.post("/_admin/script", json={"job_id": job_id, "steps": steps})
        r.raise_for_status()

    async def arrivals(self, job_id: str) -> list[float]:
        r = await self.http.get("/_admin/requests", params={"job_id": job_id})
        r.raise_for_status()
        # a request the server is answering this instant is stamped a moment after it is
        # logged: leave it for the next look
        return sorted(x["_t"] for x in r.json() if "_t" in x)

    async def close(self) -> None:
        await self.http.aclose()
        self.proc.terminate()
        self.proc.wait(10)


class WorkerProcess:
    """A worker process (`argv`, its own session) logging to `log`."""

    def __init__(self, argv: list[str], log: Path, env: dict) -> None:
        self.log = log
        self.started = time.time()
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=env,
                                     stdout=log.open("w"), stderr=subprocess.STDOUT,
                                     start_new_session=True)

    async def ready(self, timeout: float = 60) -> float:
        """Seconds from process start until it polls ('worker started' in its log)."""
        end = time.time() + timeout
        while time.time() < end:
            if "worker started" in self.log.read_text(errors="replace"):
                return time.time() - self.started
            if self.proc.poll() is not None:
                break
            await asyncio.sleep(0.05)
        raise RuntimeError(f"worker did not start:\n{self.log.read_text()[-3000:]}")

    def cpu(self) -> float:
        return process_cpu(self.proc.pid)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


def _proc_stat(pid: int) -> tuple[str, int, float]:
    """(name, parent pid, user + system CPU seconds) from /proc: psutil is a bench extra."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    try:
        import psutil
    except ImportError:
        return _proc_stat(pid)[2]
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def server_cpu(which: tuple[str, ...] = ("temporal", "weed")) -> float:
    """CPU seconds so far of the Temporal dev server and/or SeaweedFS (children of this
    process)."""
    procs: dict[int, tuple[str, int, float]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                procs[int(entry)] = _proc_stat(int(entry))
            except (OSError, ValueError):
                pass
    mine: set[int] = set()
    frontier = {os.getpid()}
    while frontier:  # descendants of this process
        frontier = {p for p, (_, ppid, _) in procs.items() if ppid in frontier} - mine
        mine |= frontier
    return sum(procs[p][2] for p in mine if any(k in procs[p][0] for k in which))


def payload_sizes(msg: Any, out: list[int]) -> None:
    for fd, value in msg.ListFields():
        if fd.type != fd.TYPE_MESSAGE:
            continue
        if fd.message_type.GetOptions().map_entry:
            items = list(value.values())
            if items and not hasattr(items[0], "ListFields"):
                continue
        else:
            items = list(value) if fd.is_repeated else [value]
        for item in items:
            if item.DESCRIPTOR.full_name == PAYLOAD:
                out.append(item.ByteSize())
            else:
                payload_sizes(item, out)


def history_figures(c: Contender, runs: list[list]) -> dict:
    """Figures of a job's history: `runs` are the event lists of its runs (continue-as-new
    makes more than one), oldest first; per-step figures run across them."""
    events = [e for run in runs for e in run]
    steps = {i: step for i, _, step in model_calls(c, events)}
    calls, total = [], 0  # (step or 0, bytes before, event index) per model call
    for i, e in enumerate(events):
        if i in steps:
            calls.append((steps[i], total, i))
        total += e.ByteSize()
    calls.append((0, total, len(events)))  # the end closes the last step
    per_step = {s: (b2 - b1, i2 - i1)
                for (s, b1, i1), (_, b2, i2) in zip(calls, calls[1:], strict=False) if s}
    sizes: list[int] = []
    for e in events:
        payload_sizes(e, sizes)
    return {"per_step": per_step, "bytes": total, "events": len(events), "runs": len(runs),
            "largest_run": max(sum(e.ByteSize() for e in run) for run in runs),
            "split": step_split(c, runs),
            "largest_payload": max(sizes, default=0), "largest_event":
            max((e.ByteSize() for e in events), default=0)}


async def job_runs(client: Any, job_id: str) -> list[list]:
    """The event lists of every run of a job (continue-as-new chains them), oldest first."""
    found = [wf async for wf in client.list_workflows(f'WorkflowId="{job_id}"')]
    found.sort(key=lambda wf: wf.start_time)
    runs = []
    for wf in found or [None]:
        handle = client.get_workflow_handle(job_id, run_id=wf.run_id if wf else None)
        runs.append(list((await handle.fetch_history()).events))
    return runs


def model_calls(c: Contender, events: list) -> list[tuple[int, Any, int]]:
    """(event index, event, step or 0) of each model call among `events`: its
    ActivityTaskScheduled, or the marker of a call run as a local activity."""
    out: list[tuple[int, Any, int]] = []
    for i, e in enumerate(events):
        if (e.HasField("activity_task_scheduled_event_attributes")
                or e.HasField("marker_recorded_event_attributes")):
            step = c.model_call_step(e, len(out) + 1)
            if step is not None:
                out.append((i, e, step))
    return out


def step_split(c: Contender, runs: list[list]) -> dict[str, float]:
    """Where a step's time goes, from the history's event times (medians, seconds): the model
    activity waiting to start (dispatch), running (model call + its S3 reads and writes),
    and from its completion to the next model call's scheduling (workflow tasks, tools).
    Calls through the server only: a model call run as a local activity has no task events
    (and `between` counts only pairs with no local call between them)."""
    dispatch, running, between = [], [], []
    for events in runs:
        t = {e.event_id: e.event_time.ToNanoseconds() / 1e9 for e in events}
        calls = [e for _, e, _ in model_calls(c, events)]
        model_ids = {e.event_id for e in calls
                     if e.HasField("activity_task_scheduled_event_attributes")}
        following = {a.event_id: b.event_id for a, b in zip(calls, calls[1:], strict=False)}
        started, done = {}, {}
        for e in events:
            if e.HasField("activity_task_started_event_attributes"):
                a = e.activity_task_started_event_attributes
                started[a.scheduled_event_id] = t[e.event_id]
            elif e.HasField("activity_task_completed_event_attributes"):
                a = e.activity_task_completed_event_attributes
                done[a.scheduled_event_id] = t[e.event_id]
        ids = sorted(i for i in model_ids if i in started and i in done)
        dispatch += [started[i] - t[i] for i in ids]
        running += [done[i] - started[i] for i in ids]
        between += [t[j] - done[i] for i, j in zip(ids, ids[1:], strict=False)
                    if following.get(i) == j]
    if not running:
        return {}
    return {"dispatch": statistics.median(dispatch), "model_activity": statistics.median(running),
            **({"between": statistics.median(between)} if between else {})}


def describe(e: BaseException) -> str:
    """The error and its causes (a WorkflowFailureError says little on its own), one line."""
    parts, seen = [], 0
    cur: BaseException | None = e
    while cur is not None and seen < 4:
        parts.append(f"{type(cur).__name__}: {cur}")
        cur, seen = getattr(cur, "cause", None) or cur.__cause__, seen + 1
    return " <- ".join(" ".join(p.split())[:300] for p in parts)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


class Run:
    def __init__(self, args: argparse.Namespace, model: ModelProcess, address: str,
                 default_client: Any, tmp: Path) -> None:
        self.args, self.model, self.address = args, model, address
        self.default_client, self.tmp = default_client, tmp

    def worker(self, c: Contender, tq: str, name: str, max_activities: int) -> WorkerProcess:
        env = {**os.environ, "TEMPORAL_ADDRESS": self.address, "PYTHONUNBUFFERED": "1",
               "OPENAI_BASE_URL": self.model.base_url, "OPENAI_API_KEY": "scripted",
               **c.worker_env(tq, max_activities, self.args.heartbeat),
               "SWITCHBACK_UVLOOP": "0" if self.args.uvloop == "none" else "1",
               "BENCH_UVLOOP": "1" if self.args.uvloop == "all" else "0"}
        return WorkerProcess(c.worker_argv(tq), self.tmp / f"{c.key}-{name}.log", env)

    async def job(self, c: Contender, client: Any, tq: str, n: int, latency: int,
                  job_id: str | None = None) -> str:
        job_id = job_id or f"{c.key}-{uuid.uuid4().hex[:10]}"
        await self.model.set_script(job_id, c.script(n, latency))
        await asyncio.wait_for(c.run_job(client, tq, job_id, n, self.args.heartbeat),
                               self.args.max_seconds)
        return job_id

    async def measure(self, c: Contender) -> dict:
        a = self.args
        out: dict[str, Any] = {}
        tq = f"bench-{c.key}-{uuid.uuid4().hex[:6]}"
        ws = ([self.worker(c, tq, f"main{i}", a.max_activities) for i in range(a.workers)]
              if c.temporal else [])
        cpu = (lambda: sum(w.cpu() for w in ws)) if ws else time.process_time
        try:
            for w in ws:  # --workers processes on one task queue, as deploy/ runs them
                out["worker_ready_s"] = await w.ready()
            client = await c.connect(self.address, self.default_client)
            await self.job(c, client, tq, 3, a.latency_ms)  # warm-up
            if a.steps:
                await self.single(c, client, tq, cpu, out)
            if a.short:
                out["short"] = await short_jobs.measure(self, c, client, tq, a.short,
                                                        a.short_runs)
            out["conc"] = {}
            for conc in a.concurrency:
                out["conc"][conc] = await self.concurrency(c, client, tq, conc, cpu)
        except Exception as e:  # noqa: BLE001 - a contender's failure is a result
            out["error"] = "; ".join(filter(None, [out.get("error"), describe(e)]))
        finally:
            for w in ws:
                w.stop()
            if hasattr(c, "close"):
                await c.close()
        if c.temporal and a.recovery_steps and "error" not in out:
            try:
                out["recovery"] = await self.recovery(c)
            except Exception as e:  # noqa: BLE001
                out["recovery_error"] = describe(e)
        return out

    async def single(self, c: Contender, client: Any, tq: str, cpu, out: dict) -> None:
        """The N-step job at --latency-ms: overhead, CPU and history figures into `out`."""
        a = self.args
        cpu0, t0 = cpu(), time.perf_counter()
        srv0, s3_0 = server_cpu(("temporal",)), server_cpu(("weed",))
        job_id = f"{c.key}-{uuid.uuid4().hex[:10]}"
        try:  # a job that fails (e.g. at a history limit) still has figures up to there
            await self.job(c, client, tq, a.steps, a.latency_ms, job_id)
        except Exception as e:  # noqa: BLE001
            out["error"] = f"{a.steps}-step job: {describe(e)}"
            if c.temporal:  # a job still running would load the concurrency runs
                with contextlib.suppress(Exception):
                    await client.get_workflow_handle(job_id).terminate("bench: failed")
        wall = time.perf_counter() - t0
        arrivals = await self.model.arrivals(job_id)
        lat = a.latency_ms / 1000
        over = [b - x - lat for x, b in zip(arrivals, arrivals[1:], strict=False)]
        out.update(calls=len(arrivals), over_median=statistics.median(over),
                   over_p95=pct(over, 0.95), over_mean=wall / len(arrivals) - lat,
                   cpu_step=(cpu() - cpu0) / len(arrivals),
                   srv_step=(server_cpu(("temporal",)) - srv0) / len(arrivals),
                   s3_step=(server_cpu(("weed",)) - s3_0) / len(arrivals))
        if c.temporal:
            out["history"] = history_figures(c, await job_runs(client, job_id))

    async def concurrency(self, c: Contender, client: Any, tq: str, conc: int, cpu) -> dict:
        a = self.args
        jobs = [f"{c.key}-c{conc}-{uuid.uuid4().hex[:8]}" for _ in range(conc * a.rounds)]
        script = c.script(a.concurrency_steps, a.concurrency_latency_ms)
        await asyncio.gather(*(self.model.set_script(j, script) for j in jobs))
        gate = asyncio.Semaphore(conc)

        async def one(job_id: str) -> None:
            async with gate:
                await c.run_job(client, tq, job_id, a.concurrency_steps, a.heartbeat)

        cpu0, srv0, t0 = cpu(), server_cpu(), time.perf_counter()
        results = await asyncio.wait_for(asyncio.gather(*(one(j) for j in jobs),
                                                        return_exceptions=True), a.max_seconds)
        wall = time.perf_counter() - t0
        calls = sum([len(x) for x in await asyncio.gather(*(self.model.arrivals(j)
                                                             for j in jobs))])
        failed = [r for r in results if isinstance(r, BaseException)]
        ideal = conc / (a.concurrency_latency_ms / 1000)  # model calls per second
        return {"jobs_s": (len(jobs) - len(failed)) / wall, "calls_s": calls / wall,
                "fraction": calls / wall / ideal, "cpu_step": (cpu() - cpu0) / max(calls, 1),
                "srv_step": (server_cpu() - srv0) / max(calls, 1),
                "failed": len(failed), "first_error": describe(failed[0]) if failed else ""}

    async def recovery(self, c: Contender) -> dict:
        """SIGKILL the worker while a model call is in flight, start a new one; seconds from the
        new worker's start to the next step (the model call after the interrupted one)."""
        a = self.args
        lat = max(a.concurrency_latency_ms, 200)
        tq = f"bench-{c.key}-rec-{uuid.uuid4().hex[:6]}"
        old = self.worker(c, tq, "rec-old", 100)
        await old.ready()
        client = await c.connect(self.address, self.default_client)
        job_id = f"{c.key}-rec-{uuid.uuid4().hex[:8]}"
        await self.model.set_script(job_id, c.script(a.recovery_steps, lat))
        run = asyncio.create_task(c.run_job(client, tq, job_id, a.recovery_steps, a.heartbeat))
        new = None
        try:
            target = max(2, c.model_calls(a.recovery_steps) // 2)
            while len(await self.model.arrivals(job_id)) < target:
                if run.done():
                    await run
                await asyncio.sleep(0.01)
            killed_at = len(await self.model.arrivals(job_id))
            old.kill()
            new = self.worker(c, tq, "rec-new", 100)
            ready = await new.ready()
            await asyncio.wait_for(run, a.max_seconds)
            after = (await self.model.arrivals(job_id))[killed_at:]
            return {"ready_s": ready, "retry_s": after[0] - new.started,
                    "next_step_s": after[1] - new.started}
        finally:
            run.cancel()
            old.kill()
            if new:
                new.stop()


def fmt_rows(results: dict[str, dict], titles: dict[str, str], a: argparse.Namespace) -> str:
    keys = list(results)
    floor = results.get("floor", {})
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, f) -> None:
        cells = []
        for k in keys:
            r = results[k]
            try:
                v = f(r)
            except (KeyError, TypeError, ZeroDivisionError, IndexError):
                v = None
            cells.append("-" if v is None else v)
        rows.append((label, cells))

    ms = lambda v: f"{v * 1000:.1f}"  # noqa: E731
    row("model calls in the N-step job", lambda r: str(r["calls"]))
    row("overhead/step median ms", lambda r: ms(r["over_median"]))
    row("overhead/step p95 ms", lambda r: ms(r["over_p95"]))
    row("overhead/step mean ms (job wall)", lambda r: ms(r["over_mean"]))
    row("median overhead / floor's", lambda r: f"{r['over_median'] / floor['over_median']:.1f}x")
    for key, label in (("dispatch", "model activity scheduled->started"),
                       ("model_activity", "model activity started->completed"),
                       ("between", "completed->next model call")):
        row(f"  step median ms: {label}", lambda r, k=key: ms(r["history"]["split"][k]))
    row("worker CPU s/step (1 job)", lambda r: f"{r['cpu_step']:.4f}")
    row("Temporal server CPU s/step (1 job)", lambda r: f"{r['srv_step']:.4f}")
    row("SeaweedFS CPU s/step (1 job)", lambda r: f"{r['s3_step']:.4f}")
    for s in [5, 50, 200] + ([1000] if a.steps >= 1000 else []):
        row(f"history events/call @ step {s}", lambda r, s=s: str(r["history"]["per_step"][s][1]))
        row(f"history bytes/call @ step {s}", lambda r, s=s: f"{r['history']['per_step'][s][0]:,}")
    row(f"history events, {a.steps}-step job", lambda r: f"{r['history']['events']:,}")
    row(f"history bytes, {a.steps}-step job", lambda r: f"{r['history']['bytes']:,}")
    row("  runs (continue-as-new); largest run bytes", lambda r: (
        f"{r['history']['runs']}; {r['history']['largest_run']:,}"))
    row("largest payload bytes", lambda r: f"{r['history']['largest_payload']:,}")
    row("largest event bytes", lambda r: f"{r['history']['largest_event']:,}")
    for conc in a.concurrency:
        row(f"jobs/s, calls/s @ {conc} concurrent (of ideal)", lambda r, c=conc: (
            f"{r['conc'][c]['jobs_s']:.2f}, {r['conc'][c]['calls_s']:.0f} "
            f"({r['conc'][c]['fraction']:.0%})"
            + (f" {r['conc'][c]['failed']} failed" if r['conc'][c]['failed'] else "")))
        row(f"worker CPU s/step @ {conc}", lambda r, c=conc: f"{r['conc'][c]['cpu_step']:.4f}")
        row(f"Temporal+SeaweedFS CPU s/step @ {conc}",
            lambda r, c=conc: f"{r['conc'][c]['srv_step']:.4f}")
    if a.recovery_steps:
        row("recovery s: new worker -> next step", lambda r: f"{r['recovery']['next_step_s']:.1f}")
        row("  of which worker start -> polling", lambda r: f"{r['recovery']['ready_s']:.1f}")
        row("  new worker -> retried model call", lambda r: f"{r['recovery']['retry_s']:.1f}")
    width = max(18, *(len(titles[k]) + 2 for k in keys))
    lines = [f"{'':38}" + "".join(f"{titles[k]:>{width}}" for k in keys)]
    lines += [f"{label:38}" + "".join(f"{v:>{width}}" for v in cells) for label, cells in rows]
    return "\n".join(lines)


def table(results: dict[str, dict], chosen: dict[str, Contender], a: argparse.Namespace) -> str:
    titles = {k: c.title for k, c in chosen.items()}
    head = [f"switchback side by side - {machine_line()}",
            f"task: N={a.steps} model steps, one 2 KB write_file each (S3), then a final answer; "
            f"model latency {a.latency_ms} ms",
            f"concurrency: {a.rounds} x C jobs of {a.concurrency_steps} steps, C at a time, "
            f"{a.concurrency_latency_ms} ms latency, {a.workers} worker process(es) per Temporal "
            f"contender; ideal = C / latency "
            f"model calls/s",
            f"recovery: {a.recovery_steps}-step job, SIGKILL mid model call, heartbeat "
            f"{a.heartbeat or 'product default'}",
            f"event loops: {a.uvloop} (--uvloop); activity slots per worker: "
            f"{a.max_activities}"]
    notes = []
    for k, r in results.items():
        for what in ("skipped", "error", "recovery_error"):
            if what in r:
                notes.append(f"{titles[k]}: {what}: {r[what]}")
        for conc, f in (r.get("conc") or {}).items():
            if f["failed"]:
                notes.append(f"{titles[k]} @ {conc}: {f['failed']} failed, {f['first_error']}")
    timeouts = ([f"--heartbeat {a.heartbeat} s for every Temporal contender"] if a.heartbeat
                else [f"{titles[k]}: {c.timeouts}" for k, c in chosen.items() if k in results])
    short = short_jobs.table(results, titles, a.short, a.short_runs) if a.short else ""
    return "\n".join(head + ["", fmt_rows(results, titles, a), "", "recovery is bounded by: "
                             + "; ".join(timeouts)] + (["", short] if short else [])
                     + (["", "notes:"] + notes if notes else []))


async def run(a: argparse.Namespace) -> str:
    chosen = {k: c for k, c in contenders().items() if k in a.peers}
    results: dict[str, dict] = {}
    async with bench_stack() as b:
        from switchback.activities.storage.s3 import S3Store

        store = S3Store(b.s3.endpoint_url)
        await store.ensure_bucket(BUCKET)
        store.close()
        model = ModelProcess(b.tmp / "model.log")
        os.environ.update({"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "scripted"})
        try:
            r = Run(a, model, b.client.service_client.config.target_host, b.client, b.tmp)
            for key, c in chosen.items():
                reason = c.missing()
                results[key] = {"skipped": reason} if reason else await r.measure(c)
                print(f"  {c.title}: done", file=sys.stderr, flush=True)
        finally:
            await model.close()
    return table(results, chosen, a)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ints = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    p.add_argument("--steps", type=int, default=200, help="N of the single-job run (0: none)")
    p.add_argument("--short", type=ints, default=[],
                   help="short jobs: N of each (e.g. 5,20,50), 0 ms latency (bench/short_jobs.py)")
    p.add_argument("--short-runs", type=int, default=3, help="jobs per N of --short (median)")
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes per Temporal contender, on one task queue (scale-out)")
    p.add_argument("--latency-ms", type=int, default=0, help="model latency of that run")
    p.add_argument("--concurrency", type=ints, default=[1, 10, 100])
    p.add_argument("--concurrency-steps", type=int, default=10)
    p.add_argument("--concurrency-latency-ms", type=int, default=200)
    p.add_argument("--rounds", type=int, default=2, help="jobs per level = rounds x C")
    p.add_argument("--recovery-steps", type=int, default=20, help="0: no recovery run")
    p.add_argument("--heartbeat", type=float, default=None,
                   help="model activity heartbeat timeout (s) for every Temporal contender; "
                        "default: each product's own default")
    p.add_argument("--max-activities", type=int, default=100,
                   help="max_concurrent_activities of every Temporal worker (100: the SDK's "
                   "default; more slots than one process keeps up with only move the queue "
                   "from the server into the worker)")
    p.add_argument("--uvloop", choices=["product", "all", "none"], default="product",
                   help="event loops: product = each its default (switchback uvloop, the "
                   "peers asyncio); all = uvloop for every worker; none = asyncio for all")
    p.add_argument("--max-seconds", type=float, default=900, help="per concurrency level")
    p.add_argument("--peers", type=lambda s: s.split(","),
                   default=["floor", "switchback", "switchback_local", "openai_agents",
                            "pydantic_ai"])
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    print(asyncio.run(run(parse(argv))), flush=True)


if __name__ == "__main__":
    main()
