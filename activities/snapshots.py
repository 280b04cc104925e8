"""Workspace snapshots at every phase start, so a job can be re-run from phase N.

    .switchback/snapshots/phase_<n>.json   {"phase", "files": {path: {etag, size}}, "state"}
    .switchback/blobs/<etag>               each distinct file content, stored once
    .switchback/config.json                the job's resolved config

A snapshot copies only contents it has not stored before (server-side copies, keyed
by the object's ETag), so a phase start costs one listing and the copies of what
changed. `restore_workspace` lays a snapshot out under another job's prefix; that is
how `starter.py rerun --from-phase N` starts.
"""

from __future__ import annotations

import json

from temporalio import activity

from activities.s3_store import S3Store
from workflows.carry import SNAPSHOT_PHASE, PhaseStart, SnapshotRequest
from workflows.config_schema import ResolvedConfig
from workflows.types import WorkspaceRef

INTERNAL = ".switchback/"


def snapshot_key(job_id: str, phase: int) -> str:
    return f"{job_id}/{INTERNAL}snapshots/phase_{phase}.json"


class SnapshotActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=SNAPSHOT_PHASE)
    async def snapshot_phase(self, req: SnapshotRequest) -> int:
        ws, root = req.workspace, f"{req.workspace.job_id}/"
        blobs = {o.key.rsplit("/", 1)[1]
                 for o in await self.s3.list(ws.bucket, f"{root}{INTERNAL}blobs/")}
        files = {}
        for o in await self.s3.list(ws.bucket, root):
            path = o.key[len(root):]
            if path.startswith(INTERNAL):
                continue
            if o.etag not in blobs:
                await self.s3.copy(ws.bucket, o.key, f"{root}{INTERNAL}blobs/{o.etag}")
                blobs.add(o.etag)
            files[path] = {"etag": o.etag, "size": o.size}
        body = {"phase": req.phase, "files": files, "state": req.state.model_dump(mode="json")}
        await self.s3.put(ws.bucket, snapshot_key(ws.job_id, req.phase),
                          json.dumps(body).encode(), "application/json")
        if req.config is not None:
            await self.s3.put(ws.bucket, f"{root}{INTERNAL}config.json",
                              req.config.model_dump_json().encode(), "application/json")
        return len(files)


async def load_snapshot(s3: S3Store, ws: WorkspaceRef,
                        phase: int) -> tuple[dict, PhaseStart, ResolvedConfig]:
    raw = await s3.get(ws.bucket, snapshot_key(ws.job_id, phase))
    if raw is None:
        found = sorted(int(o.key.rsplit("_", 1)[1].split(".")[0]) for o in await s3.list(
            ws.bucket, f"{ws.job_id}/{INTERNAL}snapshots/"))
        raise LookupError(f"job '{ws.job_id}' has no snapshot of phase {phase} "
                          f"(snapshots: {found or 'none'})")
    cfg = await s3.get(ws.bucket, f"{ws.job_id}/{INTERNAL}config.json")
    if cfg is None:
        raise LookupError(f"job '{ws.job_id}' has no .switchback/config.json")
    snap = json.loads(raw)
    return (snap["files"], PhaseStart.model_validate(snap["state"]),
            ResolvedConfig.model_validate_json(cfg))


async def restore_workspace(s3: S3Store, source: WorkspaceRef, files: dict,
                            target_job: str) -> int:
    """Copy a snapshot's files to `target_job`'s prefix (same bucket)."""
    for path, meta in files.items():
        await s3.copy(source.bucket, f"{source.job_id}/{INTERNAL}blobs/{meta['etag']}",
                      f"{target_job}/{path}")
    return len(files)
