"""A job's bucket is one the operator listed (SWITCHBACK_WORKSPACE_BUCKETS, default
`switchback`), never the payload bucket - whether the job input asks for it in an inline
config or in a forged continue-as-new carry (the worker's WorkspaceGuard)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import WorkflowFailureError

from switchback.activities.storage.buckets import bucket_problem
from switchback.activities.storage.payloads import payload_settings
from tests.conftest import running_worker
from tests.forge import forged_job
from tests.scripts import full_job

PAYLOADS = payload_settings()[0]


def test_which_buckets(monkeypatch) -> None:
    monkeypatch.delenv("SWITCHBACK_WORKSPACE_BUCKETS", raising=False)
    assert bucket_problem("switchback") is None
    assert bucket_problem("other") == ("'other' is not a workspace bucket the operator listed "
                                       "(SWITCHBACK_WORKSPACE_BUCKETS: switchback)")
    assert str(bucket_problem(PAYLOADS)).startswith(
        f"'{PAYLOADS}' is the payload bucket (SWITCHBACK_PAYLOAD_BUCKET), never a workspace")
    monkeypatch.setenv("SWITCHBACK_WORKSPACE_BUCKETS", f"switchback, team-a,{PAYLOADS}")
    assert bucket_problem("team-a") is None
    assert "is the payload bucket" in str(bucket_problem(PAYLOADS))  # even when listed


async def failure(handle) -> str:
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 60)
    return str(info.value.cause)


async def test_job_input_picks_only_listed_buckets(client, task_queue, start_job, model_server,
                                                   s3, monkeypatch):
    other = f"team-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("SWITCHBACK_WORKSPACE_BUCKETS", f"switchback,{other}")
    async with running_worker(client, task_queue):
        payload = await start_job(None, instructions="x", documents=[], config={
            "extends": "creator", "workspace": {"bucket": PAYLOADS}})
        unlisted = await start_job(None, instructions="x", documents=[], config={
            "extends": "creator", "workspace": {"bucket": "not-listed"}})
        listed = await start_job(full_job(1), model_server, instructions="x", documents=[],
                                 config={"extends": "creator", "workspace": {"bucket": other}})
        why_payload, why_unlisted = await failure(payload), await failure(unlisted)
        assert (await listed.result()).status == "completed"
    assert (f"workspace.bucket: '{PAYLOADS}' is the payload bucket (SWITCHBACK_PAYLOAD_BUCKET), "
            "never a workspace") in why_payload
    assert ("workspace.bucket: 'not-listed' is not a workspace bucket the operator listed "
            f"(SWITCHBACK_WORKSPACE_BUCKETS: switchback, {other})") in why_unlisted
    assert await s3.list(PAYLOADS, f"{payload.id}/") == []
    assert await s3.get(other, f"{listed.id}/output/completion.json") is not None
    assert await s3.list("switchback", f"{listed.id}/") == []


async def test_a_forged_carry_cannot_reach_the_payload_bucket(client, task_queue, start_job,
                                                              model_server, s3):
    async with running_worker(client, task_queue):
        done = await start_job(full_job(1), model_server, instructions="x", documents=[])
        await done.result()
        handle = await forged_job(client, s3, task_queue, done.id,
                                  workspace={"bucket": PAYLOADS})
        why = await failure(handle)
    assert "BucketNotAllowed" in why and f"'{PAYLOADS}' is the payload bucket" in why
    assert await s3.list(PAYLOADS, f"{handle.id}/") == []
    assert model_server.requests(handle.id) == []


async def test_the_cli_finds_a_job_in_its_own_bucket(client, task_queue, start_job,
                                                     model_server, s3, monkeypatch):
    """The job records where its files are (its memo: s3://<bucket>/<prefix>/); starter.py
    workspace and cat read them there, whatever SWITCHBACK_BUCKET says."""
    from tests.test_starter_errors import starter

    other = f"team-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("SWITCHBACK_WORKSPACE_BUCKETS", f"switchback,{other}")
    async with running_worker(client, task_queue):
        job = await start_job(full_job(1), model_server, instructions="x", documents=[],
                              config={"extends": "creator", "workspace": {"bucket": other}})
        assert (await job.result()).status == "completed"
    memo = await (await job.describe()).memo()
    assert memo["progress"]["workspace"] == f"s3://{other}/{job.id}/"
    listing = await asyncio.to_thread(starter, client, "workspace", job.id)
    assert listing.returncode == 0, listing
    assert f"workspace s3://{other}/{job.id}/" in listing.stdout
    assert "output/completion.json" in listing.stdout
    shown = await asyncio.to_thread(starter, client, "cat", job.id, "output/completion.json")
    assert shown.returncode == 0 and '"status": "completed"' in shown.stdout, shown


async def test_the_cli_takes_from_a_memo_only_the_jobs_own_prefix(client, monkeypatch) -> None:
    """A memo anyone could have set names at most the job's own prefix (or a nested child's
    in its parent's workspace), never another job's files or the payload bucket."""
    from switchback.operate import client as cli

    async def memo_says(where: str):
        class Desc:
            async def memo(self):
                return {"progress": {"workspace": where}}

        class Handle:
            async def describe(self):
                return Desc()

        monkeypatch.setattr(client, "get_workflow_handle", lambda job_id: Handle())
        return await cli.job_workspace(client, "job-1")

    assert await memo_says("s3://team/job-1/") == ("team", "job-1")
    assert await memo_says("s3://team/parent/subjobs/job-1/") == ("team", "parent/subjobs/job-1")
    for other in ("s3://team/job-2/", f"s3://{PAYLOADS}/job-1/", "s3://team/../job-1/",
                  "s3://team/x/../job-1"):
        assert await memo_says(other) == (cli.BUCKET, "job-1"), other
