"""Workspace snapshots at every phase start, so a job can be re-run from phase N.

    .switchback/snapshots/phase_<n>.json   {"phase", "files": {path: {etag, size}}, "state",
                                            "blobs": "on_write"}
    .switchback/blobs/<etag>               a version a snapshot names, once it is replaced
    .switchback/config.json                the job's resolved config

A snapshot is one listing of the workspace's own files (it jumps over `.switchback/`:
blobs and conversations are never listed) and one PUT of what it found: it copies nothing.
The versions it names stay where they are until something replaces them; whatever replaces
or deletes a file through switchback keeps the version first (kept_versions.py:
copy-on-write). A phase start costs the same at 10 files or 10,000 that did not change, and
a file created in a phase and never replaced is never copied. (Snapshots before this - no
"blobs" in the record - copied every new content at the phase start; they read the same.)

The snapshot itself is written once (If-None-Match): an attempt that finds it written adopts
it, so a late attempt that listed the workspace after the phase began never replaces the
phase-start record.
`restore_workspace` lays a snapshot out under another job's prefix, each file from its live
version while it still is the one named, else from the blobs; that is how `starter.py rerun
--from-phase N` starts.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from temporalio import activity

from switchback.activities.bounded_gather import bounded_gather
from switchback.activities.storage.files import internal_folder
from switchback.activities.storage.kept_versions import ON_WRITE, blob_keys
from switchback.activities.storage.s3 import UNLIMITED, ObjectInfo, PreconditionFailed, S3Store
from switchback.workflows.contract import (
    SNAPSHOT_PHASE,
    ResolvedConfig,
    SnapshotRequest,
    WorkspaceRef,
    layout,
)

COPIES = 16  # concurrent server-side copies (restore_workspace)


class SnapshotActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=SNAPSHOT_PHASE)
    async def snapshot_phase(self, req: SnapshotRequest) -> int:
        ws, root = req.workspace, layout.prefix(req.workspace.job_id)
        files: dict[str, dict[str, Any]] = {}
        for o in await self.s3.list(ws.bucket, root, limit=UNLIMITED,
                                    skip=functools.partial(internal_folder, root)):
            path = o.key[len(root):]
            if not layout.is_internal(path):
                files[path] = {"etag": o.etag, "size": o.size}
        body = {"phase": req.phase, "files": files, "state": req.state, "blobs": ON_WRITE}
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


def snapshot_phases(listed: list[ObjectInfo]) -> list[int]:
    """The phase numbers of a listing of `.switchback/snapshots/`."""
    out = []
    for o in listed:
        name = o.key.rsplit("/", 1)[1]
        if name.startswith("phase_") and name.endswith(".json") and name[6:-5].isdigit():
            out.append(int(name[6:-5]))
    return sorted(out)


async def unkept(s3: S3Store, ws: WorkspaceRef) -> list[str]:
    """Every file version a snapshot of the job names that is neither live nor kept, as
    "phase N: path" - what a rewind or rerun to that phase could not restore (empty: all
    restore). For checks (bench.chaos, tests): it reads every snapshot."""
    root = layout.prefix(ws.job_id)
    live = {o.key[len(root):]: o.etag for o in await s3.list(
        ws.bucket, root, limit=UNLIMITED, skip=functools.partial(internal_folder, root))}
    blobs = {o.key for o in await s3.list(ws.bucket, root + layout.blobs_dir(),
                                          limit=UNLIMITED)}
    out = []
    for phase in snapshot_phases(await s3.list(ws.bucket, root + layout.snapshots_dir())):
        raw = await s3.get(ws.bucket, root + layout.snapshot_path(phase))
        for path, meta in json.loads(raw or b"{}").get("files", {}).items():
            etag = str(meta["etag"])
            if live.get(path) == etag:
                continue
            job_blob, *child_blobs = blob_keys(ws.job_id, path, etag)  # (child's: not listed)
            if job_blob in blobs or [k for k in child_blobs if await s3.exists(ws.bucket, k)]:
                continue
            out.append(f"phase {phase}: {path}")
    return out


async def load_snapshot(s3: S3Store, ws: WorkspaceRef,
                        phase: int) -> tuple[dict[str, Any], dict[str, Any], ResolvedConfig]:
    """(files, the job's state at that phase start as JSON, its config)."""
    root = layout.prefix(ws.job_id)
    raw = await s3.get(ws.bucket, root + layout.snapshot_path(phase))
    if raw is None:
        found = snapshot_phases(await s3.list(ws.bucket, root + layout.snapshots_dir()))
        raise LookupError(f"job '{ws.job_id}' has no snapshot of phase {phase} "
                          f"(snapshots: {found or 'none'})")
    cfg = await s3.get(ws.bucket, root + layout.CONFIG_RECORD)
    if cfg is None:
        raise LookupError(f"job '{ws.job_id}' has no {layout.CONFIG_RECORD}")
    snap = json.loads(raw)
    return snap["files"], snap["state"], ResolvedConfig.model_validate_json(cfg)


async def restore_workspace(s3: S3Store, source: WorkspaceRef, files: dict[str, Any],
                            target_job: str) -> int:
    """Copy a snapshot's files to `target_job`'s prefix (same bucket), COPIES at a time:
    each from its live version while it is still the one the snapshot names, else from
    the blobs (LookupError naming the files found in neither)."""
    lost: list[str] = []

    async def restore(item: tuple[str, Any]) -> None:
        path, etag = item[0], str(item[1]["etag"])
        target = layout.key(target_job, path)
        try:
            await s3.copy(source.bucket, layout.key(source.job_id, path), target,
                          source_etag=etag)
        except PreconditionFailed:
            for blob in blob_keys(source.job_id, path, etag):
                try:
                    return await s3.copy(source.bucket, blob, target, source_etag=etag)
                except PreconditionFailed:
                    pass
            lost.append(path)
    await bounded_gather(list(files.items()), restore, COPIES)
    if lost:
        raise LookupError(f"job '{source.job_id}' no longer holds the snapshot's version of "
                          f"{len(lost)} file(s): {', '.join(sorted(lost)[:10])} (changed "
                          "outside switchback?)")
    return len(files)
