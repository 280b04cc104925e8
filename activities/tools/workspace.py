"""The workspace tools the model uses in every phase, plus `todo_write`.

Each handler takes the job's `WorkspaceFiles`, validated arguments and the
limits, and returns a `ToolResult`: the text the model sees (short
confirmations for writes, never the written content) and the paths it changed.
"""

from __future__ import annotations

import asyncio

from activities.storage.files import ToolError, WorkspaceFiles
from activities.storage.todos_file import check_todos_document, todos_yaml
from activities.tools.registry import (
    ListFilesArgs,
    PathArgs,
    ReadFileArgs,
    SearchFilesArgs,
    TodoWriteArgs,
    ToolResult,
    WriteFileArgs,
)
from workflows.contract import ToolLimits

MAX_LISTED = 500
MAX_MATCHES = 50
MAX_SEARCHED_FILES = 500
MAX_SEARCHED_BYTES = 1_000_000


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
    needle = a.query.lower()
    matches: list[str] = []
    candidates = [o for o in await files.list(a.path, limit=MAX_SEARCHED_FILES)
                  if o.size <= MAX_SEARCHED_BYTES]
    for o in candidates:
        text = await files.read_optional(o.key)
        if text is None or "\x00" in text[:1000]:
            continue
        want = MAX_MATCHES - len(matches)
        found = (_matches(text, needle, want) if len(text) < 100_000  # large: in a thread
                 else await asyncio.to_thread(_matches, text, needle, want))
        matches += [f"{o.key}:{n}: {line}" for n, line in found]
        if len(matches) >= MAX_MATCHES:
            return ToolResult("\n".join(matches) + f"\n... stopped at {MAX_MATCHES} "
                              "matches; narrow the query or the path")
    return ToolResult("\n".join(matches) if matches else f"No match for '{a.query}'.")


def _matches(text: str, needle: str, limit: int) -> list[tuple[int, str]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line.lower():
            out.append((n, line.strip()[:200]))
            if len(out) >= limit:
                break
    return out


async def todo_write(files: WorkspaceFiles, a: TodoWriteArgs, limits: ToolLimits) -> ToolResult:
    doc = {"phase": a.phase, "todos": [t.model_dump() for t in a.todos]}
    checked = check_todos_document(doc, limits.min_todos, limits.max_todos)
    if not checked.ok:
        raise ToolError("invalid_todos", checked.reason)
    path = await files.write_text("todos.yaml", todos_yaml(a.phase, a.description, checked.todos),
                                  limits.max_file_bytes)
    return ToolResult(f"Wrote {len(checked.todos)} todos for '{a.phase}' to todos.yaml.", [path])
