"""Durability, proven: S3 outages, a SIGKILLed worker, exhausted tool retries."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import yaml
from temporalio.client import WorkflowFailureError, WorkflowHandle

from switchback.activities.tools import registry as tool_registry
from switchback.activities.tools import run as tools
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, full_job, step
from tests.waits import wait_for_requests

ROOT = Path(__file__).resolve().parent.parent


async def archives(s3, job_id: str) -> dict[str, dict]:
    keys = [o.key for o in await s3.list("switchback", f"{job_id}/archive/")]
    return {k.rsplit("/", 1)[1]: yaml.safe_load(await s3.get("switchback", k)) for k in keys}


def slow(script: list[dict], ms: int) -> list[dict]:
    return [{**s, "latency_ms": ms} for s in script]


async def across_a_worker_kill(client, task_queue: str, tmp_path: Path,
                               start: Callable[[], Awaitable[WorkflowHandle]],
                               kill_when: Callable[[WorkflowHandle], Awaitable[object]]):
    """A job started by `start()` on a worker process that is SIGKILLed once `kill_when(handle)`
    returns; a second worker process finishes it. The job's handle and result."""
    first = worker_process(client, task_queue, tmp_path / "w1.log")
    try:
        await wait_started(tmp_path / "w1.log")
        handle = await start()
        await kill_when(handle)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        second = worker_process(client, task_queue, tmp_path / "w2.log")
        try:
            return handle, await asyncio.wait_for(handle.result(), 120)
        finally:
            second.terminate()
            second.wait(10)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)


async def test_s3_unavailable_for_seconds_mid_job(client, task_queue, start_job, model_server,
                                                 s3, s3_server):
    async with running_worker(client, task_queue):
        handle = await start_job(slow(full_job(2), 50), model_server, config="creator",
                                 instructions="x", documents=[])
        await wait_for_requests(model_server, handle.id, 12)
        await asyncio.to_thread(s3_server.stop)
        await asyncio.sleep(4)
        await asyncio.to_thread(s3_server.start)
        result = await handle.result()
    assert result.status == "completed" and result.phases == 5
    assert set(await archives(s3, handle.id)) == {"phase_2.yaml", "phase_4.yaml"}


def worker_process(client, task_queue: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host,
           "TEMPORAL_NAMESPACE": client.namespace, "SWITCHBACK_TASK_QUEUE": task_queue,
           "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "worker.py"], cwd=ROOT, env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


async def wait_started(log: Path, timeout: float = 30) -> None:
    for _ in range(int(timeout * 10)):
        if "worker started" in log.read_text():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"worker did not start:\n{log.read_text()[-2000:]}")


async def test_worker_killed_mid_job_new_worker_finishes(client, task_queue, start_job,
                                                        model_server, s3, tmp_path):
    script = slow(full_job(3), 100)
    handle, result = await across_a_worker_kill(
        client, task_queue, tmp_path,
        lambda: start_job(script, model_server, instructions="x", documents=[],
                          config={"extends": "creator", "llm": {"heartbeat_timeout_seconds": 2}}),
        lambda h: wait_for_requests(model_server, h.id, 20))
    assert result.status == "completed" and result.phases == 7
    # every scripted step was used exactly once: a retried model call got the same answer
    keys = {r["_call_key"] for r in model_server.requests(handle.id)}
    assert len(keys) == len(script) == result.steps
    arch = await archives(s3, handle.id)
    assert set(arch) == {"phase_2.yaml", "phase_4.yaml", "phase_6.yaml"}
    for a in arch.values():
        assert [t["status"] for t in a["todos"]] == ["completed"] * 5
        assert len({t["id"] for t in a["todos"]}) == 5
    files = {o.key.split("/", 1)[1] for o in await s3.list("switchback", f"{handle.id}/work/")}
    assert files == {f"work/p{p}_{i}.md" for p in (1, 2, 3) for i in range(1, 6)}


async def test_tool_failing_three_times_stops_the_job(client, task_queue, start_job,
                                                     model_server, s3, monkeypatch):
    attempts: list[int] = []

    async def fetch_rates(files, args, limits):
        attempts.append(1)
        raise ConnectionError("rates service unreachable")

    spec = tool_registry.ToolSpec("fetch_rates", "Fetch exchange rates.", tool_registry.PathArgs)
    monkeypatch.setitem(tool_registry.TOOLS, "fetch_rates", spec)
    monkeypatch.setitem(tools.HANDLERS, "fetch_rates", fetch_rates)
    script = bootstrap() + [step(call("fetch_rates", path="rates.json"))] + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[], config={
            "extends": "creator", "tools": {"domain": ["fetch_rates"], "retry": {
                "initial_interval_seconds": 0.1, "backoff_coefficient": 1}}})
        with pytest.raises(WorkflowFailureError) as info:
            await handle.result()
    cause = info.value.cause
    assert cause.type == "SwitchbackJobFailed"
    assert "tool 'fetch_rates' (rates.json) failed after 3 attempts" in str(cause)
    assert "rates service unreachable" in str(cause)
    assert len(attempts) == 3
    error = yaml.safe_load(await s3.get("switchback", f"{handle.id}/output/error.json"))
    assert error["code"] == "tool_failed" and error["phase"] == 2
