"""Copy-on-write for snapshots: a version a snapshot names is kept just before it is replaced.

    .switchback/snapshots/phase_<n>.json   {"files": {path: {etag, size}}, "blobs": "on_write"}
    .switchback/blobs/<etag>               a version some snapshot names that is no longer live

A phase's snapshot (snapshots.py) records each file's version (ETag) and copies nothing: the
version is still the live file. Whatever replaces or deletes a file through switchback first
copies the live version to `.switchback/blobs/<etag>` (a server-side copy of exactly that
version, x-amz-copy-source-if-match) when the job's latest snapshot names it - the workspace
tools' fenced writes (files.py), a rewind's restore (workspace_restore.py) and the workflow's own
records (storage/workspace.py). So a version is copied once, when it stops being live, and
only if a snapshot holds it; a file created in the phase and never replaced is never copied.

Why the latest snapshot is enough: a version an earlier snapshot names and the latest does
not was replaced between the two - when a snapshot after the earlier one named it, which
kept it then. The latest snapshot is the one the workflow's request names
(`WorkspaceRef.snapshot`: the workflow takes it before any tool of the phase runs); its file
list is read once per worker and phase (`SnapshotFiles`: snapshots are written once, so the
cache never goes stale). A request that names none (0, an older snapshot that copied
eagerly, one that is missing or unreadable) decides safely: names none or unreadable -> keep
every version replaced; eager -> keep none (its blobs exist). An attempt past its deadline
(activities/attempts.py) keeps every version it replaces: the workflow may have taken a
later snapshot than the one its request names. So does a nested job's child
(`<parent>/subjobs/<child>/`): its files lie in its parent's workspace too, and a snapshot
of the parent's, which the child's requests do not name, may hold them.

What this does not cover: a workspace file changed from outside switchback (straight to S3)
is not kept; a rewind or rerun past that change names the file it cannot restore.
"""

from __future__ import annotations

import collections
import json
from typing import Any

from switchback.activities import attempts
from switchback.activities.storage.s3 import PreconditionFailed, S3Store
from switchback.workflows.contract import WorkspaceRef, layout

ON_WRITE = "on_write"  # a snapshot's "blobs": its versions are kept when replaced
CACHED_PATHS = 200_000  # paths of snapshots' file lists a worker keeps (~40 MB at most)


class SnapshotFiles:
    """The file versions of the snapshots writes ask about, by (bucket, snapshot key), the
    least recently asked dropped first beyond `max_paths` paths in all (the latest kept)."""

    def __init__(self, max_paths: int = CACHED_PATHS) -> None:
        self.max_paths = max_paths
        self.paths = 0
        self._held: collections.OrderedDict[tuple[str, str], dict[str, str]] = (
            collections.OrderedDict())

    async def held(self, s3: S3Store, ws: WorkspaceRef) -> dict[str, str] | None:
        """{path: ETag} the snapshot `ws` names holds and has not copied ({} for an eager
        one); None when unknown (no snapshot named, missing, unreadable): keep every version."""
        if ws.snapshot <= 0:
            return None
        key = (ws.bucket, layout.key(ws.job_id, layout.snapshot_path(ws.snapshot)))
        if key in self._held:
            self._held.move_to_end(key)
            return self._held[key]
        raw = await s3.get(*key)
        if raw is None:
            return None
        try:
            snap: dict[str, Any] = json.loads(raw)
            held = ({p: str(m["etag"]) for p, m in snap["files"].items()}
                    if snap.get("blobs") == ON_WRITE else {})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        self._held[key] = held
        self.paths += len(held)
        while self.paths > self.max_paths and len(self._held) > 1:
            self.paths -= len(self._held.popitem(last=False)[1])
        return held


snapshot_files = SnapshotFiles()


async def keep_if_held(s3: S3Store, ws: WorkspaceRef, path: str, etag: str) -> None:
    """Before `path` (a workspace path) is replaced or deleted at version `etag`: keep that
    version if the job's latest snapshot names it (or that is unknown). PreconditionFailed
    when the file is no longer that version."""
    if not attempts.expired() and layout.split_subjob(ws.job_id) is None:
        held = await snapshot_files.held(s3, ws)
        if held is not None and held.get(path) != etag:
            return
    await keep(s3, ws.bucket, layout.key(ws.job_id, path), layout.prefix(ws.job_id), etag)


def blob_keys(job_id: str, path: str, etag: str) -> list[str]:
    """Where version `etag` of `path`, named by a snapshot of the workspace `job_id`, may be
    kept: that workspace's blobs, and for a file of a nested job's child
    (`subjobs/<child>/...`: a parent's rewind leaves those alone, a rerun copies them) the
    child's own, which the child's writes keep to."""
    keys = [layout.key(job_id, layout.blob_path(etag))]
    parts = path.split("/", 2)
    if len(parts) == 3 and parts[0] == layout.SUBJOBS and parts[1]:
        keys.append(layout.key(layout.subjob_prefix(job_id, parts[1]), layout.blob_path(etag)))
    return keys


async def keep(s3: S3Store, bucket: str, key: str, root: str, etag: str) -> None:
    """Copy version `etag` of `key` to the blobs of the workspace at `root` (a server-side
    copy; the same blob again if it is there). PreconditionFailed when `key` is not (or no
    longer) that version."""
    try:
        await s3.copy(bucket, key, root + layout.blob_path(etag), source_etag=etag)
    except PreconditionFailed:
        if await s3.head(bucket, root + layout.blob_path(etag)) is None:
            raise
        # kept already (an earlier attempt, before the file changed)
