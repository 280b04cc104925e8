"""A job's workspace: the prefix `<job id>/` in the bucket, seen through checked paths.

Every path a tool hands in goes through `check_path`, so nothing outside the
job's prefix (another job, the bucket root) and nothing under `.switchback/`
is reachable. The files the workflow owns (`layout.WORKFLOW_OWNED`: instructions.md,
archive/, output/completion.json, output/error.json, output/breakers/) are read-only
here: a write or delete gets `ToolError("read_only")`, whichever tool tries it, unless
the store was opened with `system=True` (the workflow's own writes, in
storage/workspace.py). `ToolError` carries a code the model can read; storage failures
raise `StorageUnavailable` and are retried by Temporal (a key S3 refuses is a
`ToolError` too).

Writes are fenced. One `WorkspaceFiles` serves one activity attempt and remembers the
ETag of each file as the attempt first saw it (read, listed - a file a whole listing of
its folder did not show counts as missing; missing counts too). A write or delete only
succeeds while the file is still that version (S3 If-Match / If-None-Match), so an attempt
that stalled past its timeout ("zombie") cannot overwrite what the accepted attempt - or a
later step - wrote: its late write fails with `WorkspaceChanged`. The first write of a file
the attempt has not seen is a create (`If-None-Match: *`): one request when the file is
missing; when it exists, a HEAD then names the version to replace, unless the attempt has
expired meanwhile (activities/attempts.py), which a zombie whose create went out late has.
A write that finds the very bytes it meant to write already there (the same step's other
attempt wrote them) succeeds. A write or delete that replaces a version the job's latest
snapshot names copies it to the snapshot blobs first (kept_versions.py: copy-on-write).
`write_once` is for files one step creates and nobody edits (cut tool results,
summaries): the first attempt's version stays and is returned.
"""

from __future__ import annotations

import difflib
import functools
import posixpath
from collections.abc import Sequence

from switchback.activities import attempts
from switchback.activities.bounded_gather import bounded_gather
from switchback.activities.storage import kept_versions
from switchback.activities.storage.paths import PathError, check_path
from switchback.activities.storage.s3 import KeyRejected, ObjectInfo, PreconditionFailed, S3Store
from switchback.workflows.contract import WorkspaceRef, layout

_UNSEEN = object()
_CREATED = object()  # _create_or_head created the file


class ToolError(Exception):
    """A mistake the model can fix: goes back to it as a tool error, never retried."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class WorkspaceChanged(RuntimeError):
    """The file changed since this attempt saw it: the write is refused (retryable - a
    live attempt retried sees the new version; a zombie's result is discarded anyway)."""


class WorkspaceFiles:
    def __init__(self, s3: S3Store, ws: WorkspaceRef, *, system: bool = False) -> None:
        self.s3 = s3
        self.ws = ws
        self.root = f"{ws.job_id}/"
        self.system = system  # the workflow's own writes: its files are writable
        self.seen: dict[str, str | None] = {}  # key -> ETag this attempt saw (None: missing)
        self.listed: set[str] = set()  # prefixes this attempt listed whole (what was there)

    def writable_key(self, path: str, verb: str) -> str:
        """The key of `path` for a write or delete; read_only for the workflow's files."""
        key = self.key(path)
        rel = key[len(self.root):]
        if not self.system and layout.is_workflow_owned(rel):
            owned = ", ".join(p + ("**" if p.endswith("/") else "")
                              for p in layout.WORKFLOW_OWNED)
            raise ToolError("read_only", f"cannot {verb} '{rel}': the workflow owns it and it is "
                            f"read-only to tools ({owned}); only job_complete completes a job")
        return key

    def key(self, path: str, *, allow_root: bool = False) -> str:
        try:
            return self.root + check_path(path, allow_root=allow_root)
        except PathError as e:
            raise ToolError(e.code, str(e)) from e

    async def _get(self, key: str) -> bytes | None:
        try:
            found = await self.s3.get_object(self.ws.bucket, key)
        except KeyRejected as e:
            raise ToolError("invalid_path", f"the storage refuses this path ({e})") from e
        self.seen.setdefault(key, found[1] if found else None)
        return found[0] if found else None

    async def read_bytes(self, path: str) -> bytes:
        data = await self._get(self.key(path))
        if data is None:
            near = await self.near(path)
            raise ToolError("file_not_found", f"'{path}' does not exist; " + (
                f"did you mean {' or '.join(repr(p) for p in near)}? " if near else "") +
                "list_files shows what is there")
        return data

    async def near(self, path: str, limit: int = 500) -> list[str]:
        """The files of `path`'s folder (its first `limit`) a mistyped `path` may mean: that
        name with an extension, or one close to it (at most 3): a model told only that a
        path does not exist tends to read it again."""
        try:
            names = [o.key for o in await self.list(posixpath.dirname(path.strip("/")),
                                                    limit=limit)]
        except (ToolError, KeyRejected):
            return []
        same = [n for n in names if posixpath.splitext(n)[0] == path.strip("/")]
        return (same or difflib.get_close_matches(path, names, n=3, cutoff=0.75))[:3]

    async def read_text(self, path: str) -> str:
        data = await self.read_bytes(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ToolError("binary_file", f"'{path}' is a binary file ({len(data)} bytes), not "
                            "text; use a document tool for it") from e

    async def read_optional(self, path: str) -> str | None:
        data = await self._get(self.key(path))
        return None if data is None else data.decode("utf-8", errors="replace")

    async def write_bytes(self, path: str, data: bytes, max_bytes: int,
                          content_type: str = "text/plain; charset=utf-8") -> str:
        key = self.writable_key(path, "write")
        if len(data) > max_bytes:
            raise ToolError("file_too_large", f"{len(data)} bytes for '{path}' exceed the limit "
                            f"of {max_bytes} bytes; split the content into several files")
        seen = self.seen.get(key, _UNSEEN)
        if seen is _UNSEEN and any(key.startswith(p) for p in self.listed) and not (
                layout.is_internal(key[len(self.root):])):  # (listings jump over those)
            seen = None  # not in a whole listing of its folder: missing when this attempt looked
        try:
            if seen is _UNSEEN:  # a create first; the version it replaces only if it exists
                seen = await self._create_or_head(key, data, content_type)
            if isinstance(seen, str):  # a version a snapshot may hold: kept first
                await kept_versions.keep_if_held(self.s3, self.ws, key[len(self.root):], seen)
            if seen is not _CREATED:
                self.seen[key] = await self.s3.put(
                    self.ws.bucket, key, data, content_type,
                    if_none_match=seen is None, if_match=seen if isinstance(seen, str) else None)
        except PreconditionFailed as e:
            found = await self.s3.get_object(self.ws.bucket, key)
            if found is None or found[0] != data:
                raise WorkspaceChanged(f"'{path}' changed since this attempt read it; "
                                       "not overwritten") from e
            self.seen[key] = found[1]  # the same bytes: another attempt of this step wrote them
        except KeyRejected as e:
            raise ToolError("invalid_path", f"the storage refuses this path ({e})") from e
        return key[len(self.root):]

    async def write_text(self, path: str, text: str, max_bytes: int) -> str:
        return await self.write_bytes(path, text.encode("utf-8"), max_bytes,
                                      _content_type(path))

    async def create(self, path: str, data: bytes, max_bytes: int, content_type: str) -> str:
        """Create `path` unless it exists (then it is left as it is); its path."""
        key = self.key(path)
        if len(data) > max_bytes:
            raise ToolError("file_too_large", f"{len(data)} bytes for '{path}' exceed the limit "
                            f"of {max_bytes} bytes")
        try:
            await self.s3.put(self.ws.bucket, key, data, content_type, if_none_match=True)
        except PreconditionFailed:
            pass
        return key[len(self.root):]

    async def write_once(self, path: str, text: str) -> str:
        """Create `path` unless an earlier attempt did; the text that is stored."""
        key = self.key(path)
        try:
            await self.s3.put(self.ws.bucket, key, text.encode("utf-8"), _content_type(path),
                              if_none_match=True)
            return text
        except PreconditionFailed:
            return (await self.s3.get(self.ws.bucket, key) or b"").decode("utf-8", "replace")

    async def delete(self, path: str) -> str:
        key = self.writable_key(path, "delete")
        if await self._get(key) is None:
            raise ToolError("file_not_found", f"'{path}' does not exist")
        try:
            await kept_versions.keep_if_held(self.s3, self.ws, key[len(self.root):],
                                             str(self.seen[key]))
            await self.s3.delete(self.ws.bucket, key, if_match=self.seen[key])
        except PreconditionFailed as e:
            raise WorkspaceChanged(f"'{path}' changed since this attempt read it; not "
                                   "deleted") from e
        self.seen[key] = None
        return key[len(self.root):]

    async def _create_or_head(self, key: str, data: bytes, content_type: str) -> object:
        """The first write of a file this attempt has not seen: `If-None-Match: *`, which
        creates it if it is missing (then `_CREATED`: one request, no HEAD). If it exists,
        its ETag by HEAD - the version this attempt sees now, to replace - unless the
        attempt has expired (activities/attempts.py): then the file may be what a later
        step wrote after the workflow stopped waiting for this attempt, and the create's
        refusal stands (PreconditionFailed: the same bytes pass, others are refused)."""
        try:
            self.seen[key] = await self.s3.put(self.ws.bucket, key, data, content_type,
                                               if_none_match=True)
            return _CREATED
        except PreconditionFailed:
            if attempts.expired():
                raise
        return await self._head(key)

    async def _head(self, key: str) -> str | None:
        try:
            etag = await self.s3.head(self.ws.bucket, key)
        except KeyRejected as e:
            raise ToolError("invalid_path", f"the storage refuses this path ({e})") from e
        self.seen[key] = etag
        return etag

    async def list(self, folder: str = "", limit: int = 10_000) -> list[ObjectInfo]:
        """Files under `folder` (paths relative to the workspace root, with size and ETag),
        internals hidden: the listing jumps over every `.switchback/` folder (conversations,
        blobs, snapshots grow with the job's age), so its cost is that of the files shown.
        What it shows is what this attempt saw (for the fence: a later write of a listed
        file needs no HEAD, nor one of a file a whole listing of its folder did not show)."""
        rel = self.key(folder, allow_root=True)[len(self.root):]
        prefix = self.root + (rel.rstrip("/") + "/" if rel else "")
        out = []
        found = await self.s3.list(self.ws.bucket, prefix, limit=limit,
                                   skip=functools.partial(internal_folder, self.root))
        for o in found:
            self.seen.setdefault(o.key, o.etag)  # the version this attempt saw
            path = o.key[len(self.root):]
            if not layout.is_internal(path):  # a file named .switchback, not a folder
                out.append(ObjectInfo(path, o.size, o.etag))
        if len(found) < limit:
            self.listed.add(prefix)
        return out

    async def read_listed(self, found: Sequence[ObjectInfo],
                          concurrency: int = 16) -> Sequence[bytes | None]:
        """The contents of files `list` just returned, at the versions it showed: from the
        worker's content cache where it holds them (S3Store.contents: no task, no await),
        the others by GET, `concurrency` at a time. None for a file deleted since."""
        out = [self.s3.contents.get(self.ws.bucket, self.root + o.key, o.etag) for o in found]
        missing = [i for i, data in enumerate(out) if data is None]

        async def read(i: int) -> None:
            got = await self.s3.get_cached(self.ws.bucket, self.root + found[i].key,
                                           found[i].etag)
            out[i] = None if got is None else got[0]
        await bounded_gather(missing, read, concurrency)
        return out


def internal_folder(root: str, key: str) -> str | None:
    """The `.switchback/` folder (as a key prefix) that `key`, a key under the workspace
    prefix `root`, lies in; None for any other key. Listings jump over such folders."""
    path = key[len(root):]
    if not layout.is_internal(path):
        return None
    parts = path.split("/")
    depth = parts.index(layout.INTERNAL) + 1
    return None if depth >= len(parts) else root + "/".join(parts[:depth]) + "/"


def _content_type(path: str) -> str:
    if path.endswith(".md"):
        return "text/markdown; charset=utf-8"
    if path.endswith(".json"):
        return "application/json"
    if path.endswith((".yaml", ".yml")):
        return "application/yaml"
    return "text/plain; charset=utf-8"
