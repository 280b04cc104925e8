"""`restore_workspace`: a job's workspace put back as it was at the start of a phase.

    .switchback/snapshots/phase_<n>.json   what the workspace held then (snapshots.py)
    .switchback/restores/from_<p>.json     the plan of a restore made by a rewind from phase p
    archive/rewound/<p>/<path>             every version the restore replaced

The plan - each file to write back (with the version it replaces, by ETag, and the one it
restores), each file to remove - is made once, from one listing, and written once
(If-None-Match): a retried attempt finds it and carries out the same plan, so the result
is the same whatever attempt reports it. Each file is then handled in order: the version
it replaces is copied to the snapshot blobs (a later snapshot may name it) and to the
archive (each created once), then the file is written back or
removed only if it still is the version the plan saw (If-Match / If-None-Match; a delete
with If-Match). A file already in the planned state counts as done, so a retry finishes
what an earlier attempt began. A late attempt ("zombie") that goes on after the workflow
moved on finds the files changed and is refused (WorkspaceChanged): it never undoes what
the next phase wrote.

Never touched: switchback's own files (`.switchback/`) and the files the workflow owns
(instructions.md, archive/, output/completion.json, output/error.json, output/breakers/).
"""

from __future__ import annotations

import functools
import json
import mimetypes
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from switchback.activities.storage import kept_versions
from switchback.activities.storage.files import WorkspaceChanged, internal_folder
from switchback.activities.storage.s3 import PreconditionFailed, S3Store
from switchback.activities.storage.snapshots import UNLIMITED, snapshot_phases
from switchback.workflows.contract import RESTORE_WORKSPACE, RestoreRequest, RestoreResult, layout

SHOWN_PATHS = 20


class RestoreActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=RESTORE_WORKSPACE)
    async def restore_workspace(self, req: RestoreRequest) -> RestoreResult:
        ws, root = req.workspace, layout.prefix(req.workspace.job_id)
        plan = await self._plan(req)
        if plan.get("missing"):
            return RestoreResult(found=False, reason=plan["missing"])
        archive_dir = layout.rewound_path(req.from_phase, "").rstrip("/")
        for entry in plan["files"]:
            path, before, target = entry["path"], entry["before"], entry["target"]
            key = root + path
            if before is not None:
                await self._archive(ws.bucket, key, before,
                                    root + layout.rewound_path(req.from_phase, path), root)
            if target is None:
                await self._remove(ws.bucket, key, before, path)
            else:
                await self._write_back(ws.bucket, key, before, target, root, path)
        files = plan["files"]
        return RestoreResult(
            found=True, restored=sum(f["target"] is not None for f in files),
            deleted=sum(f["target"] is None for f in files),
            archived=sum(f["before"] is not None for f in files), archive_dir=archive_dir,
            paths=[f["path"] for f in files[:SHOWN_PATHS]])

    async def _plan(self, req: RestoreRequest) -> dict[str, Any]:
        """The plan of this restore: made and written once, adopted by every later attempt."""
        ws, root = req.workspace, layout.prefix(req.workspace.job_id)
        key = root + layout.restore_record_path(req.from_phase)
        found = await self.s3.get(ws.bucket, key)
        if found is not None:
            return dict(json.loads(found))
        raw = await self.s3.get(ws.bucket, root + layout.snapshot_path(req.phase))
        if raw is None:
            taken = snapshot_phases(await self.s3.list(ws.bucket, root + layout.snapshots_dir()))
            return {"missing": f"the job has no snapshot of phase {req.phase} (snapshots: "
                               f"{', '.join(map(str, taken)) or 'none'})"}
        snap: dict[str, str] = {p: m["etag"] for p, m in json.loads(raw)["files"].items()
                                if _restorable(p)}
        now = {o.key[len(root):]: o.etag for o in await self.s3.list(
            ws.bucket, root, limit=UNLIMITED, skip=functools.partial(internal_folder, root))
               if _restorable(o.key[len(root):])}
        files = [{"path": p, "before": now.get(p), "target": etag}
                 for p, etag in sorted(snap.items()) if now.get(p) != etag]
        files += [{"path": p, "before": etag, "target": None}
                  for p, etag in sorted(now.items()) if p not in snap]
        plan = {"phase": req.phase, "from_phase": req.from_phase, "files": files}
        try:
            await self.s3.put(ws.bucket, key, json.dumps(plan, indent=1).encode(),
                              "application/json", if_none_match=True)
        except PreconditionFailed:  # another attempt made the plan first: that one counts
            return dict(json.loads(await self.s3.get(ws.bucket, key) or b"{}"))
        return plan

    async def _archive(self, bucket: str, key: str, before: str, archive_key: str,
                       root: str) -> None:
        """Keep the version `before` of `key` at `archive_key` (once), and in the snapshot
        blobs (a later snapshot may name it: kept_versions.py) before that."""
        if await self.s3.head(bucket, archive_key) is not None:
            return  # an earlier attempt kept it (and its blob first)
        found = await self.s3.get_object(bucket, key)
        if found is None or found[1] != before:
            raise WorkspaceChanged(f"{key} changed since the restore was planned and its "
                                   "version was not archived; not restored")
        try:
            await kept_versions.keep(self.s3, bucket, key, root, before)
            await self.s3.put(bucket, archive_key, found[0], _content_type(key),
                              if_none_match=True)
        except PreconditionFailed as e:  # the file changed, or the archive is there
            if await self.s3.head(bucket, archive_key) is None:  # (another attempt's)
                raise WorkspaceChanged(f"{key} changed since the restore was planned; "
                                       "not restored") from e

    async def _write_back(self, bucket: str, key: str, before: str | None, target: str,
                          root: str, path: str) -> None:
        data = None
        for blob in kept_versions.blob_keys(root.rstrip("/"), path, target):
            data = await self.s3.get(bucket, blob)
            if data is not None:
                break
        if data is None:
            raise ApplicationError(f"the snapshot's copy of {path} ({target}) is missing from "
                                   f"{layout.blobs_dir()}", type="SnapshotIncomplete",
                                   non_retryable=True)
        try:
            await self.s3.put(bucket, key, data, _content_type(path),
                              if_none_match=before is None, if_match=before)
        except PreconditionFailed as e:
            if await self.s3.get(bucket, key) != data:  # not already written back
                raise WorkspaceChanged(f"{path} changed since the restore was planned; "
                                       "not overwritten") from e

    async def _remove(self, bucket: str, key: str, before: str | None, path: str) -> None:
        try:
            await self.s3.delete(bucket, key, if_match=before)
        except PreconditionFailed as e:
            if await self.s3.head(bucket, key) is not None:
                raise WorkspaceChanged(f"{path} changed since the restore was planned; "
                                       "not removed") from e


def _restorable(path: str) -> bool:
    return bool(path) and not layout.is_internal(path) and not layout.is_workflow_owned(path)


def _content_type(path: str) -> str:
    if path.endswith(".md"):
        return "text/markdown; charset=utf-8"
    if path.endswith((".yaml", ".yml")):
        return "application/yaml"
    guessed = mimetypes.guess_type(path)[0]
    if guessed and guessed.startswith("text/"):
        return f"{guessed}; charset=utf-8"
    return guessed or "application/octet-stream"
