"""Workspace activities the workflow calls between model steps.

create_workspace (claims the prefix, then instructions.md, documents/ and a workspace.md
stub; documents from where document_sources.py allows),
read_memory (workspace.md, capped), load_todos (the gate on todos.yaml),
archive_phase (archive/phase_<n>.yaml), write_output (output/*.json) and check_files
(which files changed since the phase began: a todo's evidence).
Every write is a whole-object PUT under a fixed key: no duplicates, nothing
half-written. Late ("zombie") attempts are fenced with conditional writes:

- create_workspace creates each file only if it is missing (If-None-Match): a
  late attempt never undoes what the model wrote since;
- archive entries and outputs are the workflow's own records, the same bytes in
  every attempt: created once; an existing different file (not written by any
  attempt of this operation) is replaced only in the version read (If-Match).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import json
import posixpath
from pathlib import Path

import yaml
from temporalio import activity
from temporalio.exceptions import ApplicationError

from switchback.activities.bounded_gather import bounded_gather
from switchback.activities.document_sources import DocumentRefused, local_document
from switchback.activities.storage import deliverables, kept_versions, ownership
from switchback.activities.storage.files import ToolError, WorkspaceChanged, WorkspaceFiles
from switchback.activities.storage.s3 import PreconditionFailed, S3Store
from switchback.activities.storage.todos_file import parse_todos_yaml, stale_problem
from switchback.workflows.contract import (
    ARCHIVE_PHASE,
    CHECK_FILES,
    CREATE_WORKSPACE,
    LOAD_TODOS,
    READ_MEMORY,
    WRITE_OUTPUT,
    ArchiveRequest,
    CheckFilesRequest,
    CheckFilesResult,
    CreateWorkspaceRequest,
    CreateWorkspaceResult,
    DocumentSpec,
    LoadTodosRequest,
    LoadTodosResult,
    ReadMemoryRequest,
    WriteOutputRequest,
    layout,
)
from switchback.workflows.contract.plans import repeated_plan

MEMORY_STUB = ("# Workspace\n\n(Nothing recorded yet. The strategic phase fills this file with "
               "what future phases need to know.)\n")
UNLIMITED = 1 << 40
CREATES = 16  # files create_workspace creates at a time


class WorkspaceActivities:
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    @activity.defn(name=CREATE_WORKSPACE)
    async def create_workspace(self, req: CreateWorkspaceRequest) -> CreateWorkspaceResult:
        """Check every document, claim the prefix for this run (a reused job id is refused,
        nothing of the earlier job touched), then create instructions.md, documents/ and
        the workspace.md stub (each only if missing: a retried attempt keeps what the first
        wrote). Each refusal is non-retryable and says why."""
        ws = req.workspace
        await self.s3.ensure_bucket(ws.bucket)
        docs = [self._document(spec, req) for spec in req.documents]  # all checked first
        await ownership.claim(self.s3, ws, ws.run or activity.info().workflow_run_id or "")
        files = WorkspaceFiles(self.s3, ws, system=True)

        async def document(name: str, source: bytes | Path) -> list[str]:
            data = source if isinstance(source, bytes) else await asyncio.to_thread(
                source.read_bytes)
            try:
                return [await files.create(layout.document_path(name), data,
                                           req.max_file_bytes, _mime(name))]
            except ToolError as e:
                raise ApplicationError(f"document '{name}': {e}", type="BadDocument",
                                       non_retryable=True) from e

        async def markdown(path: str, text: str) -> list[str]:
            return [await files.create(path, text.encode(), UNLIMITED,
                                       "text/markdown; charset=utf-8")]
        # each file is created only if missing, so in any order: CREATES at a time (the
        # job's first model call waits for them)
        made = await bounded_gather([
            functools.partial(markdown, layout.INSTRUCTIONS, req.instructions),
            *(functools.partial(document, name, source)  # (a name given twice: the first)
              for name, source in dict(reversed(docs)).items()),
            functools.partial(self._parent_documents, ws, files),
            functools.partial(markdown, layout.MEMORY, MEMORY_STUB)], lambda f: f(), CREATES)
        return CreateWorkspaceResult(files=[path for paths in made for path in paths])

    async def _parent_documents(self, ws, files: WorkspaceFiles) -> list[str]:
        """A nested job's child gets its parent's documents/ (server-side copies). The
        worker's guard has checked that this job is a real child of that parent."""
        nested = layout.split_subjob(ws.job_id)
        if nested is None:
            return []
        source = layout.key(nested[0], layout.DOCUMENTS + "/")
        copied = []
        for o in await self.s3.list(ws.bucket, source):
            rel = layout.document_path(o.key[len(source):])
            await self.s3.copy(ws.bucket, o.key, files.root + rel)
            copied.append(rel)
        return copied

    def _document(self, spec: DocumentSpec, req: CreateWorkspaceRequest
                  ) -> tuple[str, bytes | Path]:
        """(name under documents/, inline content or the checked local file)."""
        def bad(why: str) -> ApplicationError:
            shown = {k: (v if len(v) <= 80 else f"{v[:80]}...") for k, v in
                     spec.model_dump(exclude_none=True).items()}
            return ApplicationError(f"document {shown}: {why}", type="BadDocument",
                                    non_retryable=True)
        if spec.text is not None or spec.base64 is not None:
            if not spec.name:
                raise bad("an inline document needs a 'name'")
            if spec.text is not None:
                try:
                    data = spec.text.encode()
                except UnicodeEncodeError:
                    raise bad("'text' is not valid Unicode (a lone surrogate?)") from None
            else:
                try:
                    data = base64.b64decode(spec.base64 or "", validate=True)
                except binascii.Error:
                    raise bad("'base64' is not valid base64") from None
            if len(data) > req.max_file_bytes:  # checked before anything is written
                raise bad(f"{len(data)} bytes, more than limits.max_file_bytes "
                          f"({req.max_file_bytes})")
            return _clean_name(spec.name, bad), data
        if not spec.path:
            raise bad("give 'path', 'text' or 'base64'")
        name = _clean_name(spec.name or posixpath.basename(spec.path.rstrip("/")), bad)
        try:
            return name, local_document(spec.path, req.config_folder, req.max_file_bytes)
        except DocumentRefused as e:
            raise bad(str(e)) from None

    @activity.defn(name=READ_MEMORY)
    async def read_memory(self, req: ReadMemoryRequest) -> str:
        """workspace.md (a stub when missing), or the file `req.path` ('' when missing)."""
        path = req.path or layout.MEMORY
        text = await WorkspaceFiles(self.s3, req.workspace).read_optional(path)
        text = text if text is not None else MEMORY_STUB if not req.path else ""
        if len(text) > req.max_chars:
            text = (text[:req.max_chars] + f"\n\n[{path} is {len(text)} characters; only "
                    f"the first {req.max_chars} are shown here."
                    + (" Keep it concise.]" if not req.path else "]"))
        return text

    @activity.defn(name=LOAD_TODOS)
    async def load_todos(self, req: LoadTodosRequest) -> LoadTodosResult:
        """The gate: todos.yaml parses, has min-max todos, was written by todo_write in this
        phase (`written_in`) and repeats none of `avoid`."""
        text = await WorkspaceFiles(self.s3, req.workspace).read_optional(layout.TODOS)
        result = parse_todos_yaml(text, req.min_todos, req.max_todos)
        if not result.ok or text is None:
            return result
        if req.written_in:
            raw = await self.s3.get(req.workspace.bucket,
                                    layout.key(req.workspace.job_id, layout.TODOS_WRITTEN))
            try:
                marker = json.loads(raw) if raw else None
            except ValueError:
                marker = None
            stale = stale_problem(marker if isinstance(marker, dict) else None,
                                  req.written_in, text)
            if stale:
                return LoadTodosResult(ok=False, reason=stale)
        repeat = repeated_plan([t.content for t in result.todos], req.avoid)
        if repeat:
            return LoadTodosResult(ok=False, reason=repeat)
        return result

    @activity.defn(name=CHECK_FILES)
    async def check_files(self, req: CheckFilesRequest) -> CheckFilesResult:
        """For each path: 'missing', 'unchanged' (the version the phase began with, from its
        snapshot) or 'changed'; and which deliverables are there."""
        ws = req.workspace
        raw = await self.s3.get(ws.bucket, layout.key(ws.job_id, layout.snapshot_path(
            req.phase))) if req.paths else None
        try:
            before = json.loads(raw).get("files", {}) if raw else {}
        except (ValueError, AttributeError):
            before = {}
        states: dict = {}
        for path in req.paths:
            etag = await self.s3.head(ws.bucket, layout.key(ws.job_id, path))
            old = before.get(path) if isinstance(before, dict) else None
            states[path] = ("missing" if etag is None else "unchanged"
                            if isinstance(old, dict) and old.get("etag") == etag else "changed")
        delivered, undelivered = await deliverables.check(self.s3, ws, req.deliverables) \
            if req.deliverables else ([], [])
        return CheckFilesResult(states=states, delivered=delivered, undelivered=undelivered)

    @activity.defn(name=ARCHIVE_PHASE)
    async def archive_phase(self, req: ArchiveRequest) -> str:
        body = yaml.safe_dump(req.record, sort_keys=False, allow_unicode=True, width=100)
        return await self._record(req.workspace, layout.archive_path(req.phase), body,
                                  "application/yaml")

    @activity.defn(name=WRITE_OUTPUT)
    async def write_output(self, req: WriteOutputRequest) -> str:
        """One of the workflow's records: JSON `data`, or `text` (markdown) as it is, or
        appended to the file (`append`)."""
        if req.text is not None and req.append:
            return await self._append(req.workspace, req.path, req.text)
        if req.text is not None:
            return await self._record(req.workspace, req.path, req.text,
                                      "text/markdown; charset=utf-8")
        body = json.dumps(req.data, ensure_ascii=False, indent=2)
        return await self._record(req.workspace, req.path, body, "application/json")

    async def _record(self, ws, path: str, text: str, content_type: str) -> str:
        """Write one of the workflow's own records (the same bytes in every attempt)."""
        key, data = layout.key(ws.job_id, path), text.encode("utf-8", "replace")
        for _ in range(3):
            try:
                await self.s3.put(ws.bucket, key, data, content_type, if_none_match=True)
                return path
            except PreconditionFailed:
                found = await self.s3.get_object(ws.bucket, key)
            if found is not None and found[0] == data:
                return path  # an earlier attempt of this operation wrote it
            try:  # someone else's file at the workflow's path: replace what was read
                if found is not None:  # (a snapshot may name it: kept first)
                    await kept_versions.keep_if_held(self.s3, ws, path, found[1])
                await self.s3.put(ws.bucket, key, data, content_type, if_match=(
                    found[1] if found else None), if_none_match=found is None)
                return path
            except PreconditionFailed:
                continue
        raise WorkspaceChanged(f"{path} keeps changing under the workflow; not written")

    async def _append(self, ws, path: str, text: str) -> str:
        """`text` added at the end of the file, once: an attempt that finds it in the file
        (a retry of one that wrote it, or a late one after a later append) writes nothing.
        The text names its turn, so two appends never carry the same text."""
        key = layout.key(ws.job_id, path)
        for _ in range(3):
            found = await self.s3.get_object(ws.bucket, key)
            before = found[0].decode("utf-8", "replace") if found is not None else ""
            if text in before:  # (a late attempt after a later append: not a second copy)
                return path
            try:
                if found is not None:  # a snapshot may name the version it replaces: kept
                    await kept_versions.keep_if_held(self.s3, ws, path, found[1])
                await self.s3.put(ws.bucket, key, (before + text).encode("utf-8", "replace"),
                                  "text/markdown; charset=utf-8",
                                  if_match=found[1] if found else None,
                                  if_none_match=found is None)
                return path
            except PreconditionFailed:
                continue
        raise WorkspaceChanged(f"{path} keeps changing under the workflow; not appended to")

    def all(self) -> list:
        return [self.create_workspace, self.read_memory, self.load_todos, self.archive_phase,
                self.write_output, self.check_files]


def _clean_name(name: str, bad) -> str:
    base = posixpath.basename(name.replace("\\", "/"))
    if not base or base.startswith(".") or base != name.strip():
        raise bad(f"'{name}' is not a plain file name")
    return base


def _mime(name: str) -> str:
    return {"pdf": "application/pdf", "md": "text/markdown", "txt": "text/plain",
            "html": "text/html", "htm": "text/html",
            "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            }.get(name.rsplit(".", 1)[-1].lower(), "application/octet-stream")
