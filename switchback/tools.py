"""switchback's tool API: a typed Python function becomes a tool a job can give its model.

    from switchback import ToolContext, tool

    @tool
    async def word_count(ctx: ToolContext, path: str, top: int = 10) -> str:
        '''Count the words of a workspace file and list the most common ones.

        Args:
            path: a workspace file, e.g. 'documents/a.md'
            top: how many of the most common words to list
        '''
        text = await ctx.files.read_text(path)
        ...
        return "..."

- The name is the function's (or `@tool(name=...)`): letters, digits, `_` and `-`, at most
  64 characters, no `__` and no `.` (those are for MCP tools, `<server>.<tool>`).
- The description is the docstring (up to its `Args:` section); each parameter's
  description comes from `Args:` (Google style) or from `Annotated[T, Field(description=...)]`.
- Arguments are either annotated parameters (any type pydantic validates) or a single
  pydantic model (`async def f(ctx: ToolContext, args: MyArgs)`). The JSON schema the model
  sees and the validation of what it sends come from the same types.
- A `ToolContext` parameter (any name) receives the job's workspace files, limits and id.
  Files are the job's workspace only: paths are relative to it, `..` and switchback's own
  files are refused.
- Return a `str`, a `ToolResult` or anything JSON-serialisable (sent as JSON). Paths written
  or deleted through `ctx.files` are reported as changed without you listing them.
- Raise `ToolError(code, message)` for a mistake the model can fix (bad input, missing
  file): it reads `Error [code]: message` and the call is not retried. Any other exception
  is a failure of the tool: the call is retried (3 attempts by default), then the job fails.
- `async def` tools run on the worker's event loop (await I/O, never block it); a plain
  `def` runs in a thread and cannot use `ctx.files` (its methods are coroutines).

Register tools with the entry point group `switchback.tools` in your pyproject.toml; the
value names a module (all its tools), one tool, or a list of tools:

    [project.entry-points."switchback.tools"]
    wordcount = "my_tools"

Install the package next to the worker and name the tool in a job config
(`tools.domain: [word_count]`). This module is the whole API: it imports nothing from
switchback's internals, and what it names stays stable.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

# how a tool's call is delivered when an attempt dies mid-call (docs/tools.md)
Delivery = Literal["at_least_once", "at_most_once"]

__all__ = ["FileInfo", "Files", "Limits", "Tool", "ToolContext", "ToolError", "ToolResult",
           "tool"]

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_SECTIONS = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Notes?)"
                       r":\s*$")
_ARG = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


class ToolError(Exception):
    """A mistake the model can fix: it reads `Error [code]: message`; never retried."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class ToolResult:
    """What the model reads (`text`) and the workspace paths the call wrote or deleted."""

    text: str
    changed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Limits:
    """The job's limits a tool should keep to (from the job config)."""

    max_file_bytes: int  # the largest file a write may produce
    read_max_chars: int  # how much text one read should hand the model
    max_result_chars: int  # longer answers are cut (the full text is kept in the workspace)


class FileInfo(Protocol):
    key: str  # the path, relative to the workspace root
    size: int


class Files(Protocol):
    """The job's workspace. Paths are relative to it; errors the model can fix (a missing
    file, a path outside the workspace, a file over the size limit) raise `ToolError`."""

    async def read_text(self, path: str) -> str: ...
    async def read_bytes(self, path: str) -> bytes: ...
    async def read_optional(self, path: str) -> str | None: ...
    async def write_text(self, path: str, text: str, max_bytes: int | None = None) -> str: ...
    async def write_bytes(self, path: str, data: bytes, max_bytes: int | None = None,
                          content_type: str = "application/octet-stream") -> str: ...
    async def delete(self, path: str) -> str: ...
    async def list(self, folder: str = "", limit: int = 10_000) -> list[Any]: ...


@dataclass
class ToolContext:
    """What a tool gets besides its arguments."""

    files: Files
    limits: Limits
    job_id: str
    approved: bool = False  # a person approved this very call (see `needs_approval`)
    # the same for every attempt of this one call (job, conversation, call id): a service
    # that deduplicates by it makes the call take effect once across retries
    idempotency_key: str = ""


@dataclass(frozen=True)
class Tool:
    """A tool: name, description, argument model and the function. Calling it calls the
    function as written; `invoke` is how a worker runs it."""

    name: str
    description: str
    args: type[BaseModel]
    fn: Callable[..., Any]
    # True for a call that must wait for the `approve` update whatever the job config says
    # (e.g. a query that writes); the tool then runs with `ctx.approved`
    needs_approval: Callable[[Any], bool] | None = None
    context_param: str | None = None  # the parameter that receives the ToolContext
    model_param: str | None = None  # set: the arguments arrive as one model, in this parameter
    # at_least_once: a failed attempt is run again (reads, idempotent writes); at_most_once:
    # an attempt that finds an earlier one started and unfinished does not run the tool, and
    # the model is told the outcome is unknown (sends, bookings, payments, appends)
    delivery: Delivery = "at_least_once"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    async def invoke(self, ctx: ToolContext, args: BaseModel) -> ToolResult:
        """Run the function with validated `args`; the answer as a ToolResult."""
        kwargs: dict[str, Any] = ({self.model_param: args} if self.model_param else
                                  {k: getattr(args, k) for k in type(args).model_fields})
        if self.context_param:
            kwargs[self.context_param] = ctx
        if inspect.iscoroutinefunction(self.fn):
            out = await self.fn(**kwargs)
        else:
            out = await asyncio.to_thread(functools.partial(self.fn, **kwargs))
        if isinstance(out, ToolResult):
            return out
        if isinstance(out, str):
            return ToolResult(out)
        return ToolResult(json.dumps(out, ensure_ascii=False, indent=1, default=str))


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None,
         description: str | None = None,
         needs_approval: Callable[[Any], bool] | None = None,
         delivery: Delivery = "at_least_once") -> Any:
    """Make a function a `Tool`: `@tool` or `@tool(name=..., description=...,
    needs_approval=..., delivery=...)`. Mistakes in the definition raise `TypeError` /
    `ValueError` here, when the worker loads the tool, naming the function."""
    if delivery not in ("at_least_once", "at_most_once"):
        raise ValueError(f"delivery={delivery!r}: at_least_once or at_most_once")

    def make(f: Callable[..., Any]) -> Tool:
        return dataclasses.replace(_build(f, name, description, needs_approval),
                                   delivery=delivery)
    return make(fn) if fn is not None else make


def _build(fn: Callable[..., Any], name: str | None, description: str | None,
           needs_approval: Callable[[Any], bool] | None) -> Tool:
    where = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"
    tool_name = name or fn.__name__
    if not NAME.fullmatch(tool_name) or "__" in tool_name:
        raise ValueError(f"tool {where}: name {tool_name!r} must be 1-64 letters, digits, '_' "
                         "or '-', start with a letter and contain no '__'")
    summary, arg_docs = parse_docstring(inspect.getdoc(fn) or "")
    text = description or summary
    if not text:
        raise ValueError(f"tool {where}: give it a docstring (the model reads it to decide "
                         "when to call the tool)")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as e:  # noqa: BLE001 - an unresolvable annotation, named below
        raise TypeError(f"tool {where}: cannot resolve its annotations: {e}") from e
    context_param = model_param = None
    fields: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        hint = hints.get(p.name)
        if hint is None:
            raise TypeError(f"tool {where}: parameter '{p.name}' needs a type annotation")
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {where}: *args / **kwargs cannot be described to a model")
        if isinstance(hint, type) and issubclass(hint, ToolContext):
            context_param = p.name
            continue
        if isinstance(hint, type) and issubclass(hint, BaseModel) and p.default is p.empty:
            model_param = p.name
        default = ... if p.default is p.empty else p.default
        doc = arg_docs.get(p.name)
        fields[p.name] = (hint, Field(default, description=doc) if doc and not _described(hint)
                          else default)
    if model_param is not None:
        if len(fields) != 1:
            raise TypeError(f"tool {where}: a tool takes either one pydantic model or "
                            "annotated parameters, not both")
        args_model: type[BaseModel] = hints[model_param]
    else:
        args_model = create_model(f"{tool_name}_arguments",  # type: ignore[call-overload]
                                  __config__=ConfigDict(extra="forbid"), **fields)
    return Tool(tool_name, text, args_model, fn, needs_approval, context_param, model_param)


def _described(hint: Any) -> bool:
    return any(isinstance(m, FieldInfo) and m.description
               for m in getattr(hint, "__metadata__", ()))


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google-style docstring. The
    description is the text before the first section; lines of a paragraph are joined."""
    body: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    item_indent = 0
    for line in inspect.cleandoc(doc).splitlines():
        m = _SECTIONS.match(line)
        if m:
            section, current = m.group(1), None
            continue
        indent = len(line) - len(line.lstrip())
        if section is None:
            body.append(line)
        elif section in ("Args", "Arguments", "Parameters") and line.strip():
            item = _ARG.match(line)
            if item and (current is None or indent <= item_indent):
                current, item_indent = item.group(1), indent
                args[current] = item.group(2).strip()
            elif current:
                args[current] = f"{args[current]} {line.strip()}".strip()
    paragraphs = [" ".join(p.split()) for p in "\n".join(body).split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p), args
