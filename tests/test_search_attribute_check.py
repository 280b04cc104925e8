"""A worker on a namespace without switchback's search attributes: it registers them where it
may; where it may not, it refuses to start with the commands that create them (an upsert of a
missing attribute fails the workflow task, which Temporal retries forever: the job would
stall), or, with SWITCHBACK_SEARCH_ATTRIBUTES=off, runs every job without them.

The namespace is a real one on the dev server whose 3 Int slots (SQL visibility) are already
taken, so adding SwitchbackPhaseNumber and SwitchbackTokens fails there, as on a namespace the
worker may not change (Temporal Cloud)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from google.protobuf.duration_pb2 import Duration
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.client import Client

from switchback.workflows.contract import SEARCH_ATTRIBUTES, JobInput, JobResult
from tests.scripts import call, step
from tests.test_durability import wait_started

ROOT = Path(__file__).resolve().parent.parent
INT = IndexedValueType.INDEXED_VALUE_TYPE_INT


async def crowded_namespace(client: Client) -> Client:
    """A new namespace whose Int search attribute slots are all taken."""
    ns = f"crowded-{uuid.uuid4().hex[:8]}"
    await client.workflow_service.register_namespace(RegisterNamespaceRequest(
        namespace=ns, workflow_execution_retention_period=Duration(seconds=86_400)))
    other = Client(client.service_client, namespace=ns, data_converter=client.data_converter)
    for _ in range(100):  # the new namespace reaches the server's cache in a few seconds
        try:
            await other.operator_service.add_search_attributes(AddSearchAttributesRequest(
                namespace=ns, search_attributes={f"Other{i}": INT for i in range(3)}))
            break
        except Exception:  # noqa: BLE001 - not there yet
            await asyncio.sleep(0.2)
    have = await other.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=ns))
    assert {"Other0", "Other1", "Other2"} <= set(have.custom_attributes)
    return other


def worker(client: Client, task_queue: str, log: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "worker.py"], cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1",
                                     "TEMPORAL_ADDRESS": client.service_client.config.target_host,
                                     "TEMPORAL_NAMESPACE": client.namespace,
                                     "SWITCHBACK_TASK_QUEUE": task_queue, **env})


async def test_a_worker_refuses_a_namespace_missing_search_attributes(client, s3, tmp_path):
    crowded = await crowded_namespace(client)
    log = tmp_path / "worker.log"
    proc = worker(crowded, "tq-refused", log)
    try:
        code = await asyncio.to_thread(proc.wait, 60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    out = log.read_text()
    assert code != 0 and "Traceback" not in out, out
    assert f"namespace '{crowded.namespace}' lacks the search attributes" in out, out
    for name in ("SwitchbackPhaseNumber", "SwitchbackTokens"):
        assert f"--name {name} --type Int" in out, out
    assert "SWITCHBACK_SEARCH_ATTRIBUTES=off" in out and "worker started" not in out


async def test_with_search_attributes_off_jobs_run_without_them(client, s3, model_server,
                                                                 tmp_path):
    crowded = await crowded_namespace(client)
    log, task_queue = tmp_path / "worker.log", f"tq-{uuid.uuid4().hex[:8]}"
    proc = worker(crowded, task_queue, log, SWITCHBACK_SEARCH_ATTRIBUTES="off")
    try:
        await wait_started(log)
        job_id = f"job-{uuid.uuid4().hex[:8]}"
        model_server.set_script(job_id, [step(call("job_complete", summary="hi",
                                                   deliverables=[], confidence=0.9, notes=""))])
        handle = await crowded.start_workflow(
            "AgentJob", JobInput(config={"strategy": "react"}, instructions="say hi"),
            id=job_id, task_queue=task_queue, result_type=JobResult)
        result = await asyncio.wait_for(handle.result(), 120)
        desc = await handle.describe()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 20)
    assert result.status == "completed"
    assert not set(desc.search_attributes) & set(SEARCH_ATTRIBUTES)  # none upserted


def test_the_deploy_guide_creates_every_search_attribute() -> None:
    guide = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    for name, kind in SEARCH_ATTRIBUTES.items():
        assert f"--name {name} --type {kind}" in guide and f"--sa '{name}={kind}'" in guide
