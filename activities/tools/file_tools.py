"""The workspace tools the model uses in every phase, plus `todo_write`.

Each handler takes the job's `WorkspaceFiles`, validated arguments and the
limits, and returns a `ToolResult`: the text the model sees (short
confirmations for writes, never the written content) and the paths it changed.
"""

from __future__ import annotations

import asyncio

from switchback.activities.storage.files import ToolError, WorkspaceFiles
from switchback.activities.storage.s3 import ObjectInfo
from switchback.activities.storage.todos_file import check_todos_document, todos_yaml
from switchback.activities.tools.registry import (
    ListFilesArgs,
    PathArgs,
    ReadFileArgs,
    SearchFilesArgs,
    TodoWriteArgs,
    ToolResult,
    WriteFileArgs,
)
from switchback.workflows.contract import ToolLimits

MAX_LISTED = 500
MAX_MATCHES = 50
MAX_SEARCHED_BYTES = 1_000_000  # a larger file is not searched (a document tool reads it)
MAX_SEARCHED_TOTAL = 64_000_000  # bytes one search reads (and holds) at most
MAX_SEARCH_LISTED = 100_000  # files one search lists at most


async def read_file(files: WorkspaceFiles, a: ReadFileArgs, limits: ToolLimits) -> ToolResult:
    text = await files.read_text(a.path)
    if a.offset > len(text):
        raise ToolError("bad_offset", f"offset {a.offset} is past the end of '{a.path}' "
                        f"({len(text)} characters)")
    end = a.offset + limits.read_max_chars
    part = text[a.offset:end]
    if a.offset == 0 and end >= len(text):
        return ToolResult(part)
    more = (f" Call read_file(path='{a.path}', offset={end}) to read on." if end < len(text)
            else "")
    return ToolResult(f"{part}\n\n[... truncated: characters {a.offset}-{min(end, len(text))} "
                      f"of {len(text)}.{more}]")


async def write_file(files: WorkspaceFiles, a: WriteFileArgs, limits: ToolLimits) -> ToolResult:
    path = await files.write_text(a.path, a.content, limits.max_file_bytes)
    return ToolResult(f"Wrote {len(a.content.encode())} bytes to {path}.", [path])


async def delete_file(files: WorkspaceFiles, a: PathArgs, limits: ToolLimits) -> ToolResult:
    path = await files.delete(a.path)
    return ToolResult(f"Deleted {path}.", [path])


async def list_files(files: WorkspaceFiles, a: ListFilesArgs, limits: ToolLimits) -> ToolResult:
    found = await files.list(a.path, limit=MAX_LISTED + 1)
    if not found:
        return ToolResult(f"No files under '{a.path or '/'}'.")
    lines = [f"{o.key}  ({o.size} bytes)" for o in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        lines.append(f"... more than {MAX_LISTED} files; list a subfolder to see the rest")
    return ToolResult("\n".join(lines))


async def search_files(files: WorkspaceFiles, a: SearchFilesArgs,
                       limits: ToolLimits) -> ToolResult:
    """Every text file under `a.path` is searched (the listing's ETags name the versions; the
    worker's content cache holds the ones read before, so a warm search is one listing and a
    scan in memory, off the event loop). Results stop at MAX_MATCHES; files over
    MAX_SEARCHED_BYTES, or beyond MAX_SEARCHED_TOTAL bytes in all, are not searched: the
    result says how many, so the model never takes a partial search for a complete one."""
    listed = await files.list(a.path, limit=MAX_SEARCH_LISTED)
    small = [o for o in listed if o.size <= MAX_SEARCHED_BYTES]
    too_big = len(listed) - len(small)
    budget = MAX_SEARCHED_TOTAL
    todo: list[ObjectInfo] = []
    for o in small:
        if o.size > budget:
            break
        budget -= o.size
        todo.append(o)
    bodies = await files.read_listed(todo)
    matches, searched = await asyncio.to_thread(
        _search, [(o.key, b) for o, b in zip(todo, bodies, strict=True)], a.query.lower())
    notes = []
    if len(matches) >= MAX_MATCHES:
        notes.append(f"stopped at {MAX_MATCHES} matches; narrow the query or the path")
    left = len(small) - len(todo) + too_big
    if left or len(listed) >= MAX_SEARCH_LISTED:
        notes.append(f"searched {len(todo)} of {len(listed)}"
                     f"{'+' if len(listed) >= MAX_SEARCH_LISTED else ''} files; not searched: "
                     f"{too_big} over {MAX_SEARCHED_BYTES} bytes, {len(small) - len(todo)} past "
                     f"{MAX_SEARCHED_TOTAL} bytes in all; search a folder to cover the rest")
    text = "\n".join(matches) if matches else f"No match for '{a.query}' in {searched} files."
    return ToolResult(text + "".join(f"\n... {n}" for n in notes))


def _search(found: list[tuple[str, bytes | None]], needle: str) -> tuple[list[str], int]:
    """(up to MAX_MATCHES 'path:line: text' in path order, text files searched)."""
    matches: list[str] = []
    searched = 0
    for path, data in found:
        if data is None or b"\x00" in data[:1000]:  # deleted since the listing, or binary
            continue
        searched += 1
        text = data.decode("utf-8", errors="replace")
        if needle not in text.lower():
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if needle in line.lower():
                matches.append(f"{path}:{n}: {line.strip()[:200]}")
                if len(matches) >= MAX_MATCHES:
                    return matches, searched
    return matches, searched


async def todo_write(files: WorkspaceFiles, a: TodoWriteArgs, limits: ToolLimits) -> ToolResult:
    doc = {"phase": a.phase, "todos": [t.model_dump() for t in a.todos]}
    checked = check_todos_document(doc, limits.min_todos, limits.max_todos)
    if not checked.ok:
        raise ToolError("invalid_todos", checked.reason)
    path = await files.write_text("todos.yaml", todos_yaml(a.phase, a.description, checked.todos),
                                  limits.max_file_bytes)
    return ToolResult(f"Wrote {len(checked.todos)} todos for '{a.phase}' to todos.yaml.", [path])
