"""Workspace snapshots at every phase start, so a job can be re-run from phase N.

    .switchback/snapshots/phase_<n>.json   {"phase", "files": {path: {etag, size}}, "state"}
    .switchback/blobs/<etag>               each distinct file content, stored once
    .switchback/config.json                the job's resolved config

A snapshot copies only contents it has not stored before (server-side copies, keyed
by the object's ETag, of exactly that version: x-amz-copy-source-if-match), so a phase
start costs one listing and the copies of what changed. The snapshot itself is written
once (If-None-Match): an attempt that finds it written adopts it, so a late attempt
that listed the workspace after the phase began never replaces the phase-start record.
`restore_workspace` lays a snapshot out under another job's prefix; that is how
`starter.py rerun --from-phase N` starts.
"""

from __future__ import annotations

import json
from typing import Any

from temporalio import activity

from activities.storage.s3 import PreconditionFailed, S3Store
from workflows.contract import SNAPSHOT_PHASE, ResolvedConfig, SnapshotRequest, WorkspaceRef, layout


class SnapshotActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=SNAPSHOT_PHASE)
    async def snapshot_phase(self, req: SnapshotRequest) -> int:
        ws, root = req.workspace, layout.prefix(req.workspace.job_id)
        blobs = {o.key.rsplit("/", 1)[1]
                 for o in await self.s3.list(ws.bucket, root + layout.blobs_dir())}
        files = {}
        for o in await self.s3.list(ws.bucket, root):
            path = o.key[len(root):]
            if layout.is_internal(path):
                continue
            if o.etag not in blobs:
                await self.s3.copy(ws.bucket, o.key, root + layout.blob_path(o.etag),
                                   source_etag=o.etag)
                blobs.add(o.etag)
            files[path] = {"etag": o.etag, "size": o.size}
        body = {"phase": req.phase, "files": files, "state": req.state}
        key = root + layout.snapshot_path(req.phase)
        try:
            await self.s3.put(ws.bucket, key, json.dumps(body).encode(), "application/json",
                              if_none_match=True)
        except PreconditionFailed:  # an earlier attempt recorded this phase start
            files = json.loads(await self.s3.get(ws.bucket, key) or b"{}").get("files", {})
        if req.config is not None:
            await self.s3.put(ws.bucket, root + layout.CONFIG_RECORD,
                              req.config.model_dump_json().encode(), "application/json")
        return len(files)


async def load_snapshot(s3: S3Store, ws: WorkspaceRef,
                        phase: int) -> tuple[dict[str, Any], dict[str, Any], ResolvedConfig]:
    """(files, the job's state at that phase start as JSON, its config)."""
    root = layout.prefix(ws.job_id)
    raw = await s3.get(ws.bucket, root + layout.snapshot_path(phase))
    if raw is None:
        found = sorted(int(o.key.rsplit("_", 1)[1].split(".")[0]) for o in await s3.list(
            ws.bucket, root + layout.snapshots_dir()))
        raise LookupError(f"job '{ws.job_id}' has no snapshot of phase {phase} "
                          f"(snapshots: {found or 'none'})")
    cfg = await s3.get(ws.bucket, root + layout.CONFIG_RECORD)
    if cfg is None:
        raise LookupError(f"job '{ws.job_id}' has no {layout.CONFIG_RECORD}")
    snap = json.loads(raw)
    return snap["files"], snap["state"], ResolvedConfig.model_validate_json(cfg)


async def restore_workspace(s3: S3Store, source: WorkspaceRef, files: dict[str, Any],
                            target_job: str) -> int:
    """Copy a snapshot's files to `target_job`'s prefix (same bucket)."""
    for path, meta in files.items():
        await s3.copy(source.bucket, layout.key(source.job_id, layout.blob_path(meta["etag"])),
                      layout.key(target_job, path))
    return len(files)
