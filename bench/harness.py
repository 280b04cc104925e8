"""Benchmark harness: the same real servers the tests use, started on free ports."""

from __future__ import annotations

import os
import platform
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from switchback.activities.storage.payloads import data_converter, payload_settings
from switchback.activities.storage.s3 import S3Store
from switchback.devstack.processes import venv_bin
from switchback.devstack.scripted_model import ScriptedModelServer
from switchback.devstack.seaweed import SeaweedS3
from switchback.devstack.temporal_server import temporal_extra_args


@dataclass
class Bench:
    client: Client
    model: ScriptedModelServer
    s3: SeaweedS3
    tmp: Path  # scratch files the worker can read (same machine)


@asynccontextmanager
async def bench_stack() -> AsyncIterator[Bench]:
    with tempfile.TemporaryDirectory(prefix="switchback-bench-") as tmp:
        s3 = SeaweedS3(os.path.join(tmp, "s3"), access_key="bench", secret_key="bench-secret")
        s3.start()
        os.environ.update({"AWS_ENDPOINT_URL_S3": s3.endpoint_url, "AWS_ACCESS_KEY_ID": "bench",
                           "AWS_SECRET_ACCESS_KEY": "bench-secret", "AWS_REGION": "us-east-1"})
        model = ScriptedModelServer().start()
        os.environ.update({"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "scripted"})
        store = S3Store(s3.endpoint_url)
        await store.ensure_bucket(payload_settings()[0])
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=venv_bin("temporal"),
            dev_server_extra_args=temporal_extra_args(), data_converter=data_converter(store))
        try:
            yield Bench(env.client, model, s3, Path(tmp))
        finally:
            await env.shutdown()
            store.close()
            model.stop()
            s3.stop()


@asynccontextmanager
async def seaweed_store(bucket: str, prefix: str = "switchback-s3-") -> AsyncIterator[S3Store]:
    """An S3Store on a throwaway SeaweedFS with `bucket` made: storage-only benchmarks
    (bench.workspace_growth, bench.document_growth), no Temporal and no model."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        weed = SeaweedS3(os.path.join(tmp, "s3"), access_key="bench", secret_key="bench-secret")
        weed.start()
        os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench-secret",
                           "AWS_REGION": "us-east-1"})
        store = S3Store(weed.endpoint_url)
        try:
            await store.ensure_bucket(bucket)
            yield store
        finally:
            store.close()
            weed.stop()


def machine_line() -> str:
    return (f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
            f"{os.cpu_count()} cores, Python {platform.python_version()}")
