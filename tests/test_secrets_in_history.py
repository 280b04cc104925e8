"""Secrets stay out of Temporal: the worker's OPENAI_API_KEY and AWS_SECRET_ACCESS_KEY appear
nowhere in a job's history, memo, search attributes, state or workspace. And a job id with
hostile characters cannot reach another job's workspace prefix."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest
from temporalio.client import Client, WorkflowFailureError

from switchback.activities.storage.s3 import S3Store
from switchback.worker import build_worker
from switchback.workflows.contract import JobInput, JobResult
from tests.scripts import call, full_job, step

BUCKET = "switchback"


async def test_worker_secrets_never_reach_history(client: Client, task_queue, model_server, s3,
                                                  monkeypatch):
    api_key = f"sk-switchback-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", api_key)  # restored after the test
    aws_secret = os.environ["AWS_SECRET_ACCESS_KEY"]  # the S3 server accepts only its own
    secrets = {"OPENAI_API_KEY": api_key.encode(), "AWS_SECRET_ACCESS_KEY": aws_secret.encode()}
    job_id = f"job-{uuid.uuid4().hex[:10]}"
    model_server.set_script(job_id, full_job(1))
    store = S3Store()
    worker, closers = build_worker(client, task_queue, store)
    try:
        async with worker:
            handle = await client.start_workflow(
                "AgentJob", JobInput(config="creator", instructions="# Task\nDo it.\n",
                                     documents=[]),
                id=job_id, task_queue=task_queue, result_type=JobResult)
            assert (await handle.result()).status == "completed"
            state = await handle.query("state")
        # the worker did use the key: its model client was built with it
        assert any(c.api_key == api_key for p in closers for c in p.model._clients.values())
    finally:
        for c in closers:
            await c.close()
        store.close()

    history = await handle.fetch_history()
    desc = await handle.describe()
    places = {f"event {e.event_id} ({e.WhichOneof('attributes')})": e.SerializeToString()
              for e in history.events}
    places["memo"] = desc.raw_description.workflow_execution_info.memo.SerializeToString()
    places["search attributes"] = \
        desc.raw_description.workflow_execution_info.search_attributes.SerializeToString()
    places["description"] = desc.raw_description.SerializeToString()
    places["state query"] = repr(state).encode()
    for obj in await s3.list(BUCKET, f"{job_id}/"):
        places[f"s3://{BUCKET}/{obj.key}"] = await s3.get(BUCKET, obj.key) or b""
    assert len(places) > 100 and desc.search_attributes  # the scan saw the job
    leaks = [(name, where) for name, value in secrets.items() for where, data in places.items()
             if value in data]
    assert not leaks, leaks


# --- hostile job ids -------------------------------------------------------------------------

async def run_intruder(client: Client, task_queue: str, model_server, job_id: str,
                       steps: list[dict]) -> None:
    """Run a job whose model tries `steps` then stops; wait until it ends (any outcome)."""
    model_server.set_script(job_id, steps)
    config = {"extends": "creator", "workspace": {"retry": {"maximum_attempts": 1}}}
    try:
        handle = await client.start_workflow(
            "AgentJob", JobInput(config=config, instructions="# Intruder\n", documents=[]),
            id=job_id, task_queue=task_queue, result_type=JobResult)
    except Exception as e:  # noqa: BLE001 - a rejected id is a fine outcome
        print(f"job id {job_id!r} rejected at start: {e}")
        return
    try:
        await asyncio.wait_for(handle.result(), 60)
    except WorkflowFailureError as e:
        print(f"job {job_id!r} failed: {e.cause}")


async def seed_victim(s3, victim: str) -> tuple[bytes, set[str]]:
    secret = f"VICTIM-SECRET-{uuid.uuid4().hex}".encode()
    await s3.put(BUCKET, f"{victim}/instructions.md", b"# Victim\n")
    await s3.put(BUCKET, f"{victim}/secret.md", secret)
    return secret, {o.key for o in await s3.list(BUCKET, f"{victim}/")}


async def assert_untouched(s3, model_server, victim: str, intruder: str, secret: bytes,
                           keys: set[str]) -> None:
    own = f"{intruder}/"  # a job nested in the victim's prefix keeps its own files there
    nested = own.startswith(f"{victim}/")
    now = {o.key for o in await s3.list(BUCKET, f"{victim}/")
           if not (nested and o.key.startswith(own))}
    assert now == keys, f"job {intruder!r} changed the files of job {victim!r}"
    assert await s3.get(BUCKET, f"{victim}/instructions.md") == b"# Victim\n"
    seen = str(model_server.requests(intruder)).encode()
    assert secret not in seen, f"job {intruder!r} read job {victim!r}'s secret.md"


def probe(prefix: str = "") -> list[dict]:
    return [step(call("list_files", path=prefix or "")),
            step(call("read_file", path=f"{prefix}secret.md")),
            step(call("write_file", path=f"{prefix}planted.md", content="planted")),
            step(call("write_file", path=f"{prefix}instructions.md", content="overwritten"))]


async def test_dot_dot_job_id_cannot_reach_sibling(client, task_queue, model_server, s3):
    victim = f"victim-{uuid.uuid4().hex[:8]}"
    secret, keys = await seed_victim(s3, victim)
    store = S3Store()
    worker, closers = build_worker(client, task_queue, store)
    async with worker:
        for intruder in (f"../{victim}", f"x/../{victim}", f"./{victim}"):
            await run_intruder(client, task_queue, model_server, intruder, probe())
            await assert_untouched(s3, model_server, victim, intruder, secret, keys)
    for c in closers:
        await c.close()
    store.close()


async def test_nested_job_id_cannot_reach_parent(client, task_queue, model_server, s3):
    """Job `a/b` lives under `a/b/`: it cannot climb to `a/`'s files."""
    victim = f"team-{uuid.uuid4().hex[:8]}"
    secret, keys = await seed_victim(s3, victim)
    store = S3Store()
    worker, closers = build_worker(client, task_queue, store)
    async with worker:
        intruder = f"{victim}/b"
        await run_intruder(client, task_queue, model_server, intruder,
                           probe() + [step(call("read_file", path="../secret.md"))])
        await assert_untouched(s3, model_server, victim, intruder, secret, keys)
    for c in closers:
        await c.close()
    store.close()


async def test_nested_job_ids_are_refused(client, task_queue, model_server, s3):
    """No job id contains '/', so no job's prefix can lie inside another's."""
    base = f"team-{uuid.uuid4().hex[:8]}"
    store = S3Store()
    worker, closers = build_worker(client, task_queue, store)
    async with worker:
        handle = await client.start_workflow(
            "AgentJob", JobInput(config="creator", instructions="# x\n", documents=[]),
            id=f"{base}/b", task_queue=task_queue, result_type=JobResult)
        with pytest.raises(WorkflowFailureError) as info:
            await asyncio.wait_for(handle.result(), 60)
    for c in closers:
        await c.close()
    store.close()
    assert "cannot name a workspace" in str(info.value.cause)
    assert await s3.list(BUCKET, f"{base}/") == []


@pytest.mark.parametrize("shape", ["{}/", "/{}", "{}\\"])
async def test_slash_job_id_cannot_alias_another_job(client, task_queue, model_server, s3,
                                                     shape):
    victim = f"victim-{uuid.uuid4().hex[:8]}"
    secret, keys = await seed_victim(s3, victim)
    intruder = shape.format(victim)
    store = S3Store()
    worker, closers = build_worker(client, task_queue, store)
    async with worker:
        await run_intruder(client, task_queue, model_server, intruder, probe())
        await assert_untouched(s3, model_server, victim, intruder, secret, keys)
    for c in closers:
        await c.close()
    store.close()
