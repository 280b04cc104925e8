"""switchback in a user's own worker: examples/embedded/app_worker.py (its own `Greet`
workflow, `plugins=[SwitchbackPlugin()]` on its client) runs as its own process; a `Greet`
and an `AgentJob` started on its one queue both complete."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from temporalio.client import Client

from tests.scripts import call, step
from tests.test_durability import wait_started
from workflows.contract import JobInput, JobResult

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "examples" / "embedded"


async def test_an_embedded_worker_runs_its_workflow_and_agent_jobs(
        client: Client, s3, model_server, tmp_path) -> None:
    queue, log = f"app-{uuid.uuid4().hex[:8]}", tmp_path / "app.log"
    proc = subprocess.Popen(
        [sys.executable, "app_worker.py"], cwd=APP, stdout=log.open("w"),
        stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
             "TEMPORAL_ADDRESS": client.service_client.config.target_host,
             "TEMPORAL_NAMESPACE": client.namespace, "APP_TASK_QUEUE": queue})
    try:
        await wait_started(log)  # "app worker started"
        job_id = f"job-{uuid.uuid4().hex[:8]}"
        model_server.set_script(job_id, [
            step(call("write_file", path="hello.md", content="# Hello\n")),
            step(call("job_complete", summary="wrote hello.md", deliverables=["hello.md"],
                      confidence=0.9, notes=""))])
        job = await client.start_workflow(
            "AgentJob", JobInput(config={"strategy": "react"}, instructions="write hello.md"),
            id=job_id, task_queue=queue, result_type=JobResult)
        greeting = await client.execute_workflow("Greet", "Ada", id=f"greet-{job_id}",
                                                 task_queue=queue, result_type=str)
        result = await asyncio.wait_for(job.result(), 120)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 20)
    assert greeting == "Hello, Ada!"
    assert result.status == "completed" and result.verified == ["hello.md"], result
    assert await s3.get("switchback", f"{job_id}/hello.md") == b"# Hello\n"
    assert proc.returncode is not None and "Traceback" not in log.read_text(), log.read_text()
