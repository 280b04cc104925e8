"""Workspace snapshots at every phase start, so a job can be re-run from phase N.

    .switchback/snapshots/phase_<n>.json   {"phase", "files": {path: {etag, size}}, "state"}
    .switchback/blobs/<etag>               each distinct file content, stored once
    .switchback/config.json                the job's resolved config

A snapshot copies only contents it has not stored before (server-side copies, keyed
by the object's ETag, of exactly that version: x-amz-copy-source-if-match), COPIES at a
time. Which contents are stored it learns from the latest earlier snapshot (every ETag a
snapshot names has its blob: a snapshot is written after its copies), so a phase start
costs one GET, one listing of the workspace's own files (the listing jumps over
`.switchback/`: blobs and conversations are never listed) and the copies of what changed.
A job with no earlier snapshot lists the blobs instead, and so does a snapshot with over
LIST_BLOBS_ABOVE contents to copy (a retry after an attempt that timed out midway then
copies only the rest: a snapshot runs as a local activity with a 30 s timeout). The
snapshot itself is written once (If-None-Match): an attempt that finds it written adopts
it, so a late attempt that listed the workspace after the phase began never replaces the
phase-start record.
`restore_workspace` lays a snapshot out under another job's prefix; that is how
`starter.py rerun --from-phase N` starts.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from temporalio import activity

from activities.bounded_gather import bounded_gather
from activities.storage.files import internal_folder
from activities.storage.s3 import UNLIMITED, ObjectInfo, PreconditionFailed, S3Store
from workflows.contract import SNAPSHOT_PHASE, ResolvedConfig, SnapshotRequest, WorkspaceRef, layout

COPIES = 16  # concurrent server-side copies
LIST_BLOBS_ABOVE = 500  # copies to make, above which the blobs are listed first


class SnapshotActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=SNAPSHOT_PHASE)
    async def snapshot_phase(self, req: SnapshotRequest) -> int:
        ws, root = req.workspace, layout.prefix(req.workspace.job_id)
        stored = await self._stored(ws, req.phase)
        files: dict[str, dict[str, Any]] = {}
        todo: dict[str, str] = {}  # ETag -> a key of that content
        for o in await self.s3.list(ws.bucket, root, limit=UNLIMITED,
                                    skip=functools.partial(internal_folder, root)):
            path = o.key[len(root):]
            if layout.is_internal(path):
                continue
            if o.etag not in stored:
                todo.setdefault(o.etag, o.key)
            files[path] = {"etag": o.etag, "size": o.size}
        if len(todo) > LIST_BLOBS_ABOVE:  # many copies: a listing of the blobs (1 request a
            # 1,000) may spare some - those an earlier attempt that timed out made
            for o in await self.s3.list(ws.bucket, root + layout.blobs_dir(), limit=UNLIMITED):
                todo.pop(o.key.rsplit("/", 1)[1], None)
        await bounded_gather(list(todo.items()), lambda item: self.s3.copy(
            ws.bucket, item[1], root + layout.blob_path(item[0]), source_etag=item[0]), COPIES)
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

    async def _stored(self, ws: WorkspaceRef, phase: int) -> set[str]:
        """ETags whose blob exists: those of the latest snapshot before `phase` (usually
        phase - 1, one GET), else of a listing of the blobs."""
        root = layout.prefix(ws.job_id)
        raw = await self.s3.get(ws.bucket, root + layout.snapshot_path(phase - 1))
        if raw is None:
            earlier = [n for n in snapshot_phases(await self.s3.list(
                ws.bucket, root + layout.snapshots_dir())) if n < phase]
            if earlier:
                raw = await self.s3.get(ws.bucket, root + layout.snapshot_path(max(earlier)))
        if raw is not None:
            try:
                return {str(m["etag"]) for m in json.loads(raw)["files"].values()}
            except (ValueError, KeyError, TypeError, AttributeError):
                pass  # not a snapshot this code wrote: the blobs tell
        return {o.key.rsplit("/", 1)[1] for o in await self.s3.list(
            ws.bucket, root + layout.blobs_dir(), limit=UNLIMITED)}


def snapshot_phases(listed: list[ObjectInfo]) -> list[int]:
    """The phase numbers of a listing of `.switchback/snapshots/`."""
    out = []
    for o in listed:
        name = o.key.rsplit("/", 1)[1]
        if name.startswith("phase_") and name.endswith(".json") and name[6:-5].isdigit():
            out.append(int(name[6:-5]))
    return sorted(out)


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
    """Copy a snapshot's files to `target_job`'s prefix (same bucket), COPIES at a time."""
    await bounded_gather(list(files.items()), lambda item: s3.copy(
        source.bucket, layout.key(source.job_id, layout.blob_path(item[1]["etag"])),
        layout.key(target_job, item[0])), COPIES)
    return len(files)
