"""Python tool packages: every tool registered under the entry point group `switchback.tools`.

An entry point names a module (all the `switchback.tool`s in it, in order), one tool or a
list of tools. switchback's own web_search comes the same way, from its pyproject.toml, and
so do the document app's tools (examples/documents), so the product uses the extension point
users have. `python_tools()` loads them once per process:

- a tool's source is `built-in` (the switchback distribution) or `package <distribution>`;
- an entry point that does not load, or a tool name defined twice (or shadowing a core tool)
  is recorded in `load_errors()` naming the entry point; the worker prints them at start and
  goes on, and a job that names such a tool fails at its start saying why.

`handler(tool)` adapts a tool to `run_tool`'s handler form: it builds the `ToolContext` (the
job's files through `ToolFiles`, which keeps to the job's file size limit and remembers the
paths written or deleted) and returns the internal `ToolResult`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from switchback import Limits, Tool, ToolContext, ToolError
from switchback.activities.storage.files import ToolError as StorageToolError
from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.tools import delivery, registry
from switchback.workflows.contract import ToolLimits, layout

GROUP = "switchback.tools"
OWN_DISTRIBUTION = "switchback-agents"  # pyproject.toml [project] name
CORE = frozenset(registry.TOOLS)  # the core tools (catalog.py adds the packages' later)
log = logging.getLogger("switchback.tools")


@dataclass(frozen=True)
class PythonTool:
    tool: Tool
    source: str  # "built-in" | "package <distribution>"
    entry_point: str  # "name = value", for messages


def _tools_of(obj: Any) -> list[Tool]:
    if isinstance(obj, Tool):
        return [obj]
    if isinstance(obj, ModuleType):
        return [v for v in vars(obj).values() if isinstance(v, Tool)]
    if isinstance(obj, list | tuple) and obj and all(isinstance(v, Tool) for v in obj):
        return list(obj)
    raise TypeError(f"it names a {type(obj).__name__}, not a tool, a list of tools or a "
                    "module of tools (decorate functions with switchback.tool)")


def _describe(ep: EntryPoint) -> tuple[str, str]:
    dist = ep.dist.name if ep.dist is not None else "?"
    source = "built-in" if dist == OWN_DISTRIBUTION else f"package {dist}"
    return source, f"'{ep.name} = {ep.value}' ({dist})"


@functools.cache
def _load() -> tuple[dict[str, PythonTool], tuple[str, ...]]:
    found: dict[str, PythonTool] = {}
    errors: list[str] = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.dist.name if e.dist else "",
                                                               e.name)):
        source, where = _describe(ep)
        try:
            tools = _tools_of(ep.load())
        except Exception as e:  # noqa: BLE001 - a broken package must not stop the others
            errors.append(f"tool entry point {where} does not load: {type(e).__name__}: "
                          f"{' '.join(str(e).split())[:300]}")
            continue
        for t in tools:
            other = found.get(t.name)
            if other is not None and other.tool is t:
                continue
            if other is not None or t.name in CORE:
                by = other.entry_point if other else "switchback's core tools"
                errors.append(f"tool '{t.name}' of entry point {where} is already defined by "
                              f"{by}; the first one is kept")
                continue
            found[t.name] = PythonTool(t, source, where)
    if not any(p.source == "built-in" for p in found.values()):
        errors.append("switchback's own tool entry points are missing (is switchback "
                      "installed? pip install -e .): the web_search tool is not available")
    for problem in errors:
        log.error("%s", problem)
    return found, tuple(errors)


def python_tools() -> dict[str, PythonTool]:
    """Every tool of every installed package (switchback's own included), by name."""
    return _load()[0]


def load_errors() -> tuple[str, ...]:
    return _load()[1]


class ToolFiles:
    """`switchback.Files` over the job's workspace: writes keep to the job's size limit,
    changed paths are remembered, errors are `switchback.ToolError`s."""

    def __init__(self, files: WorkspaceFiles, max_file_bytes: int) -> None:
        self._files = files
        self._max = max_file_bytes
        self.changed: list[str] = []

    async def _do(self, op: Awaitable[Any]) -> Any:
        try:
            return await op
        except StorageToolError as e:
            raise ToolError(e.code, str(e)) from e

    async def read_text(self, path: str) -> str:
        return str(await self._do(self._files.read_text(path)))

    async def read_bytes(self, path: str) -> bytes:
        return bytes(await self._do(self._files.read_bytes(path)))

    async def read_optional(self, path: str) -> str | None:
        out = await self._do(self._files.read_optional(path))
        return None if out is None else str(out)

    async def write_text(self, path: str, text: str, max_bytes: int | None = None) -> str:
        out = str(await self._do(self._files.write_text(path, text, max_bytes or self._max)))
        self.changed.append(out)
        return out

    async def write_bytes(self, path: str, data: bytes, max_bytes: int | None = None,
                          content_type: str = "application/octet-stream") -> str:
        out = str(await self._do(self._files.write_bytes(path, data, max_bytes or self._max,
                                                         content_type)))
        self.changed.append(out)
        return out

    async def delete(self, path: str) -> str:
        out = str(await self._do(self._files.delete(path)))
        self.changed.append(out)
        return out

    async def list(self, folder: str = "", limit: int = 10_000) -> list[Any]:
        return list(await self._do(self._files.list(folder, limit)))


def tool_context(files: WorkspaceFiles, limits: ToolLimits) -> ToolContext:
    return ToolContext(files=ToolFiles(files, limits.max_file_bytes),
                       limits=Limits(max_file_bytes=limits.max_file_bytes,
                                     read_max_chars=limits.read_max_chars,
                                     max_result_chars=limits.max_result_chars),
                       job_id=layout.job_of(files.ws.job_id), approved=limits.approved,
                       idempotency_key=delivery.CALL_KEY.get())


Handler = Callable[..., Awaitable[registry.ToolResult]]  # (files, arguments, limits)


def handler(t: Tool) -> Handler:
    """`t` in the form `run_tool` calls: (files, validated arguments, limits) -> result."""

    async def run(files: WorkspaceFiles, args: BaseModel,
                  limits: ToolLimits) -> registry.ToolResult:
        ctx = tool_context(files, limits)
        out = await t.invoke(ctx, args)
        assert isinstance(ctx.files, ToolFiles)
        return registry.ToolResult(out.text, list(dict.fromkeys(out.changed
                                                                 + ctx.files.changed)))
    return run


def spec(t: Tool) -> registry.ToolSpec:
    return registry.ToolSpec(t.name, t.description, t.args, t.needs_approval)
