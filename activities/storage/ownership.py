"""Who a workspace prefix belongs to: `.switchback/owner.json`.

A Temporal workflow id can be used again once the job that had it has closed; the
workspace prefix is the job id. So `create_workspace` claims the prefix for its run
before it writes anything: an empty prefix is claimed (the marker names the run), a
prefix this very run claimed is its own (a retried attempt goes on), anything else - an
earlier job's files, with or without a marker - is refused, and nothing is written or
deleted. `starter.py rerun` marks the prefix it lays a snapshot out under with the job it
re-runs (`rerun_of`), which is what the model activity checks before it answers from that
job's recorded responses (`replay_from`, which `starter.py rerun` sets); the rerun's first
activity claims it for its run.

Runs that start from a carried state (continue-as-new, a rerun - or a hand-made `carry`)
do not call create_workspace, so the worker's WorkspaceGuard calls `check_owner` before
every activity: the prefix must belong to the job's first run (`WorkspaceRef.run`, from
the workflow's info, which job input cannot set). A prefix without a marker is a
workspace from before markers existed and is let be.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from temporalio.exceptions import ApplicationError

from switchback.activities.storage.s3 import S3Store
from switchback.workflows.contract import WorkspaceRef, layout


async def owner(s3: S3Store, ws: WorkspaceRef) -> dict[str, Any] | None:
    raw = await s3.get(ws.bucket, layout.key(ws.job_id, layout.OWNER))
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


async def claim(s3: S3Store, ws: WorkspaceRef, run_id: str) -> None:
    """Make `ws` this run's workspace, or refuse (non-retryable) if it is another's."""
    found, listed = await asyncio.gather(  # both at once: a job's start waits for them
        owner(s3, ws), s3.list(ws.bucket, layout.prefix(ws.job_id), limit=1000))
    if found is not None and found.get("run_id") == run_id:
        return  # this run claimed it: a retried attempt
    where = f"s3://{ws.bucket}/{layout.prefix(ws.job_id)}"
    existing = [o.key[len(layout.prefix(ws.job_id)):] for o in listed]
    if found is not None or existing:
        visible = [p for p in existing if not layout.is_internal(p)]
        shown = ", ".join(visible[:5]) + (", ..." if len(visible) > 5 else "")
        if found is not None:
            whose = (f"belongs to run {found.get('run_id')} (created {found.get('created')})"
                     if found.get("run_id") else
                     f"is a rerun of job {found.get('rerun_of')!r}" if found.get("rerun_of")
                     else "belongs to another job")
        else:
            whose = "holds files of an earlier job"
        count = f"{len(existing)}{'+' if len(existing) >= 1000 else ''} objects"
        raise ApplicationError(
            f"job id {ws.job_id!r} is already used: {where} {whose} ({count}"
            f"{': ' + shown if shown else ''}); nothing was changed. Start the job under "
            "another id", type="JobIdInUse", non_retryable=True)
    await mark(s3, ws, {"job_id": ws.job_id, "run_id": run_id})
    _verified.add((ws.bucket, ws.job_id, run_id))


async def mark(s3: S3Store, ws: WorkspaceRef, record: dict[str, Any]) -> None:
    body = {**record, "created": datetime.now(UTC).isoformat(timespec="seconds")}
    await s3.put(ws.bucket, layout.key(ws.job_id, layout.OWNER), json.dumps(body).encode(),
                 "application/json")


async def rerun_source(s3: S3Store, ws: WorkspaceRef) -> str | None:
    """The job `ws` was laid out from by `starter.py rerun`, if it was."""
    found = await owner(s3, ws)
    source = (found or {}).get("rerun_of")
    return source if isinstance(source, str) else None


_verified: set[tuple[str, str, str]] = set()  # (bucket, job, first run) checked in this process


async def check_owner(s3: S3Store, ws: WorkspaceRef) -> None:
    """Refuse (non-retryable) unless `ws`'s prefix belongs to the run `ws.run`."""
    key = (ws.bucket, ws.job_id, ws.run)
    if not ws.run or key in _verified:
        return
    found = await owner(s3, ws)
    if found is not None and found.get("run_id") is None and found.get("rerun_of"):
        await mark(s3, ws, {**found, "run_id": ws.run})  # a rerun's first activity claims it
    elif found is not None and found.get("run_id") != ws.run:
        raise ApplicationError(
            f"job id {ws.job_id!r} is already used: s3://{ws.bucket}/{layout.prefix(ws.job_id)} "
            f"belongs to run {found.get('run_id')}, not to this job (first run {ws.run}); "
            "nothing was changed", type="JobIdInUse", non_retryable=True)
    _verified.add(key)
