"""A fleet of worker processes: 30 jobs on 3 `python worker.py`, one SIGKILLed mid-run.

The two survivors finish every job; each workspace is complete and has nothing extra, and every
scripted model step was used exactly once per job (a model call retried after the crash got the
same answer through its idempotency key). Prints the figures; asserts no timing.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections import Counter
from pathlib import Path

import yaml
from temporalio.api.enums.v1 import EventType

from deploy.local.fleet import kill_worker, start_worker, stop_worker, wait_worker_started
from deploy.local.fleet import worker_env as fleet_worker_env
from switchback.workflows.contract import JobInput, JobResult
from tests.scripts import full_job

JOBS, WORKERS, LATENCY_MS = 30, 3, 50
CONFIG = {"extends": "creator",
          "llm": {"heartbeat_timeout_seconds": 2},     # a dead worker's model call: retried in 2 s
          "tools": {"timeout_seconds": 10}}            # ... its tool call: in 10 s, not 120
EXPECTED = ({"archive/phase_2.yaml", "archive/phase_4.yaml", "output/completion.json"}
            | {f"work/p{p}_{i}.md" for p in (1, 2) for i in range(1, 6)})


def proc_usage(pid: int) -> tuple[float, float]:
    """(peak RSS MiB, CPU seconds) of a live process, from /proc."""
    proc = Path(f"/proc/{pid}")
    status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines())
    fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(status["VmHWM"].split()[0]) / 1024, (int(fields[11]) + int(fields[12])) / ticks


async def retries(handle) -> Counter:
    """What a job ran more than once: activities by type (retried attempts), and workflow tasks
    that timed out (sticky to the dead worker)."""
    scheduled: dict[int, str] = {}
    out: Counter = Counter()
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[e.event_id] = e.activity_task_scheduled_event_attributes.activity_type.name
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = e.activity_task_started_event_attributes
            out[scheduled[started.scheduled_event_id]] += started.attempt - 1
        elif e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
            out["workflow task"] += 1
    return +out


async def workspace_keys(s3, job_id: str) -> set[str]:
    return {o.key.split("/", 1)[1] for o in await s3.list("switchback", f"{job_id}/")}


async def test_fleet_survives_a_killed_worker(client, model_server, s3, tmp_path):
    queue = f"fleet-{uuid.uuid4().hex[:8]}"
    env = fleet_worker_env({"TEMPORAL_ADDRESS": client.service_client.config.target_host,
                            "TEMPORAL_NAMESPACE": client.namespace,
                            "SWITCHBACK_TASK_QUEUE": queue})
    logs = [tmp_path / f"worker-{i}.log" for i in range(WORKERS)]
    procs = [start_worker(env, log) for log in logs]
    try:
        for p, log in zip(procs, logs, strict=True):
            await asyncio.to_thread(wait_worker_started, p, log)
        script = [{**s, "latency_ms": LATENCY_MS} for s in full_job(2)]
        t0 = time.monotonic()
        handles = []
        for n in range(JOBS):
            job_id = f"fleet-{queue}-{n:02d}"
            model_server.set_script(job_id, script)
            handles.append(await client.start_workflow(
                "AgentJob", JobInput(config=CONFIG, instructions="x", documents=[]), id=job_id,
                task_queue=queue, result_type=JobResult))

        def calls() -> int:
            return sum(len(model_server.requests(h.id)) for h in handles)
        while calls() < JOBS * len(script) // 3:  # a third of all model steps answered
            assert time.monotonic() - t0 < 120, f"only {calls()} model calls in 120 s"
            await asyncio.sleep(0.05)
        at_kill = calls()
        t_kill = time.monotonic()
        await asyncio.to_thread(kill_worker, procs[0])
        done: list[float] = []

        async def finished(h):
            result = await h.result()
            done.append(time.monotonic() - t0)
            return result
        results = await asyncio.wait_for(asyncio.gather(*(finished(h) for h in handles)), 150)
        elapsed, after_kill = time.monotonic() - t0, time.monotonic() - t_kill
        usage = [proc_usage(p.pid) for p in procs[1:]]
    finally:
        for p in procs:
            await asyncio.to_thread(stop_worker, p)

    retried, rerun = 0, Counter()
    for h, result in zip(handles, results, strict=True):
        assert result.status == "completed" and result.phases == 5, (h.id, result)
        requests = model_server.requests(h.id)
        keys = {r["_call_key"] for r in requests}
        assert len(keys) == len(script) == result.steps, h.id
        retried += len(requests) - len(keys)
        rerun += await retries(h)
        files = await workspace_keys(s3, h.id)
        assert {f for f in files if f.startswith(("archive/", "work/", "output/"))} == EXPECTED
        for phase in (2, 4):
            key = f"{h.id}/archive/phase_{phase}.yaml"
            archive = yaml.safe_load(await s3.get("switchback", key))
            assert [t["status"] for t in archive["todos"]] == ["completed"] * 5, h.id
        completion = json.loads(await s3.get("switchback", f"{h.id}/output/completion.json"))
        assert completion["status"] == "completed", h.id
    assert rerun, "the kill hit nothing: no retried activity, no timed-out workflow task"
    print(f"\nfleet: {JOBS} jobs x {len(script)} model steps on {WORKERS} workers, worker 0 "
          f"SIGKILLed after {at_kill} model calls: all done in {elapsed:.1f}s "
          f"({after_kill:.1f}s after the kill; jobs done at {min(done):.1f}s first, "
          f"{sorted(done)[len(done) // 2]:.1f}s median), {retried} model calls retried, "
          f"retried: {dict(rerun)}; "
          "surviving workers: " + ", ".join(f"peak RSS {m:.0f} MiB, {c:.1f} CPU-s"
                                             for m, c in usage))
