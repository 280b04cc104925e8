"""`run_tool`: one model tool call, carried out against the job's workspace.

The call's arguments are read from the stored assistant message (they never
enter workflow history); the result is stored as the conversation's tool
message; the workflow gets a short `ToolOutcome`. A result of at most
`inline_max_chars` (a confirmation, an error) is returned whole instead and goes
to the store with the next model call, off the step's critical path. A result longer than
`max_result_chars` is cut, with a pointer to the full text (the file itself for
read_file, else `tool_outputs/<conversation>/<n>.txt`, written here). Mistakes the
model made come back as tool errors with a code; storage failures raise and are
retried.

A tool run as a local activity has its own activity type, `tool.<name>` (the web UI's
timeline names local activities by type alone): `run_tool_as` serves every such type,
as the worker's one dynamic activity, and checks the workspace itself (the worker's
WorkspaceGuard sees only raw payloads there).

A tool of an MCP server (named in the job's tool record, `req.tool_record`) is called
through the worker's session to that server (mcp_sessions.py); `tool_search` searches the
descriptions of the record, so it finds MCP tools too.

Every result has the worker's credentials redacted (activities/redaction.py): a search
provider or an MCP server that echoes its key does not hand it to the model.

Fenced (see activities/storage/files.py and conversations.py): the tool's workspace
writes succeed only on the file versions this attempt saw, the stored result and the
full text of a cut one are written once. An attempt that timed out and goes on
("zombie") cannot change what the accepted attempt or a later step wrote.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable, Sequence

from temporalio import activity
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from switchback import ToolError as PublicToolError
from switchback.activities.redaction import redact
from switchback.activities.storage.buckets import guard_workspace
from switchback.activities.storage.conversations import ConversationStore
from switchback.activities.storage.files import ToolError, WorkspaceFiles
from switchback.activities.storage.s3 import S3Store
from switchback.activities.storage.todos_file import check_todos_document, digest, todos_yaml
from switchback.activities.tools import catalog as tool_catalog
from switchback.activities.tools import delivery, packages, search
from switchback.activities.tools.file_tools import todo_write
from switchback.activities.tools.mcp_sessions import McpServers
from switchback.activities.tools.record import RecordedTool, Records
from switchback.activities.tools.registry import TodoWriteArgs, ToolResult, parse_arguments
from switchback.workflows.contract import (
    RUN_TOOL,
    TOOL_ACTIVITY_PREFIX,
    ToolOutcome,
    ToolRequest,
    layout,
)

Handler = Callable[..., Awaitable[ToolResult]]
OFF_LOOP_CHARS = 1 << 20
HANDLERS: dict[str, Handler] = tool_catalog.HANDLERS


class ToolActivities:
    def __init__(self, s3: S3Store, store: ConversationStore,
                 mcp: McpServers | None = None) -> None:
        self.s3 = s3
        self.store = store
        self.mcp = mcp or McpServers()
        self.records = Records(s3)

    @activity.defn(name=RUN_TOOL)
    async def run_tool(self, req: ToolRequest) -> ToolOutcome:
        ws, conv = req.workspace, req.conversation
        assistant = await self.store.get(ws, conv, req.assistant_index)
        call = next((c for c in assistant.get("tool_calls") or [] if c["id"] == req.call_id),
                    None)
        if call is None:
            raise ApplicationError(f"tool call {req.call_id} not found in message "
                                   f"{req.assistant_index} of {conv}", non_retryable=True)
        raw = call["function"]["arguments"]
        token = delivery.CALL_KEY.set(delivery.idempotency_key(req))
        try:
            if await self._delivery(req) == delivery.AT_MOST_ONCE:  # (activities/tools/delivery.py)
                outcome = await delivery.at_most_once(
                    self.s3, req, functools.partial(self._run, req, raw))  # marks, then sends
            else:
                outcome = await self._run(req, raw)
        finally:
            delivery.CALL_KEY.reset(token)
        if req.name == "todo_write" and outcome.ok:
            await self._mark_todos(req, raw)
        summary = outcome.summary  # a long one is redacted in a thread, off the event loop
        text = await self._cut(req, raw, redact(summary) if len(summary) < OFF_LOOP_CHARS
                               else await asyncio.to_thread(redact, summary))
        if len(text) <= req.inline_max_chars:  # stored with the next model call
            outcome.summary, outcome.stored = text, False
            return outcome
        # written once: an earlier attempt's stored result (it timed out after writing) is
        # the result; a late attempt cannot replace it. Not cached when the workflow could
        # take a retried attempt's short result inline instead, which then replaces it.
        meta = outcome.model_dump(include={"ok", "code", "changed", "tools_added"})
        stored, ours = await self.store.put_once(
            ws, conv, req.result_index, {"role": "tool", "tool_call_id": req.call_id,
                                         "content": text, "_meta": {"outcome": meta}},
            cache=not req.inline_max_chars)
        if not ours:
            outcome = ToolOutcome(**{**meta, **(stored.get("_meta") or {}).get("outcome", {})})
        outcome.summary = str(stored.get("content") or "")[:200]
        return outcome

    async def _mark_todos(self, req: ToolRequest, raw: str) -> None:
        """Note which phase's todo_write wrote todos.yaml (the gate takes only this phase's
        plan; see activities/storage/todos_file.py). The model cannot write it. The digest
        is of the text this call wrote, made again from its arguments as todo_write made it
        (no second GET of the file just written)."""
        ws = req.workspace
        args, _ = parse_arguments(req.name, raw)
        if isinstance(args, TodoWriteArgs) and HANDLERS.get(req.name) is todo_write:
            checked = check_todos_document({"phase": args.phase, "todos": [
                t.model_dump() for t in args.todos]}, req.limits.min_todos, req.limits.max_todos)
            text = todos_yaml(args.phase, args.description, checked.todos)
        else:  # another handler by that name: what it wrote
            text = await WorkspaceFiles(self.s3, ws).read_optional(layout.TODOS) or ""
        marker = {"conversation": req.conversation, "sha256": digest(text)}
        await self.s3.put(ws.bucket, layout.key(ws.job_id, layout.TODOS_WRITTEN),
                          json.dumps(marker).encode(), "application/json")

    @activity.defn(dynamic=True)
    async def run_tool_as(self, args: Sequence[RawValue]) -> ToolOutcome:
        """`run_tool` under the activity type `tool.<name>` (a local activity of the workflow
        worker); any other type this worker does not know is refused, as the SDK would."""
        kind = activity.info().activity_type
        if not kind.startswith(TOOL_ACTIVITY_PREFIX) or len(args) != 1:
            raise ApplicationError(f"activity {kind!r} is not registered on this worker",
                                   type="NotFoundError")
        req = activity.payload_converter().from_payload(args[0].payload, ToolRequest)
        if req.name != kind[len(TOOL_ACTIVITY_PREFIX):]:
            raise ApplicationError(f"activity {kind!r} was sent a call of {req.name!r}",
                                   type="BadToolRequest", non_retryable=True)
        await guard_workspace(self.s3, req.workspace, kind)  # the guard saw only raw input
        return await self.run_tool(req)

    async def _cut(self, req: ToolRequest, raw: str, text: str) -> str:
        limit = req.limits.max_result_chars
        if len(text) <= limit:
            return text
        if req.name == "read_file":
            args, _ = parse_arguments(req.name, raw)
            path, offset = getattr(args, "path", "?"), getattr(args, "offset", 0) + limit
            where = f"Read on with read_file(path='{path}', offset={offset})."
        else:
            path = layout.tool_output_path(req.conversation, req.result_index)
            # once: an earlier attempt's full text stays, and this cut is made from it
            text = await WorkspaceFiles(self.s3, req.workspace).write_once(path, text)
            where = f"The full result is in {path}; read_file it with offset={limit} for more."
        return f"{text[:limit]}\n\n[... cut at {limit} of {len(text)} characters. {where}]"

    async def _delivery(self, req: ToolRequest) -> str:
        """How this call is delivered: as the job's tool record has it (a package tool's
        declaration, an MCP tool's annotations or the operator's word), else at_least_once."""
        if req.tool_record:
            record = await self.records.get(req.workspace.bucket, req.tool_record)
            entry = record.tools.get(req.name)
            if entry is not None:
                return entry.delivery or "at_least_once"
        packaged = packages.python_tools().get(req.name)
        return packaged.tool.delivery if packaged is not None else "at_least_once"

    async def _run(self, req: ToolRequest, raw: str,
                   mark: delivery.Mark | None = None) -> ToolOutcome:
        """Run the call; `mark` (an at-most-once call's intent) is awaited right before the
        tool is invoked - never for a call refused before that."""
        handler = HANDLERS.get(req.name)
        if req.tool_record and (handler is None or req.name == "tool_search"):
            record = await self.records.get(req.workspace.bucket, req.tool_record)
            entry = record.tools.get(req.name)
            if entry is not None and entry.server is not None:
                return await self._mcp(entry, raw, mark)
            if req.name == "tool_search":
                handler = functools.partial(search.tool_search,
                                            descriptions=record.descriptions())
        if handler is None:
            return _error("unknown_tool", f"tool '{req.name}' has no implementation here")
        args, problem = parse_arguments(req.name, raw)
        if args is None:
            return _error("invalid_arguments", problem or "bad arguments")
        if mark is not None:
            await mark()
        try:
            result = await handler(WorkspaceFiles(self.s3, req.workspace), args, req.limits)
        except (ToolError, PublicToolError) as e:
            return _error(e.code, str(e))
        return ToolOutcome(ok=True, summary=result.text, changed=result.changed,
                           tools_added=result.tools_added)


    async def _mcp(self, entry: RecordedTool, raw: str,
                   mark: delivery.Mark | None = None) -> ToolOutcome:
        assert entry.server is not None and entry.tool is not None
        try:
            args = json.loads(raw or "{}")
        except json.JSONDecodeError as e:
            return _error("invalid_arguments", f"not valid JSON ({e.msg}); send a JSON object")
        if not isinstance(args, dict):
            return _error("invalid_arguments", "the arguments must be a JSON object")
        if entry.server not in self.mcp.names():  # a worker without it took the task
            raise ApplicationError(f"MCP server '{entry.server}' is not declared on this "
                                   f"worker ({self.mcp.config.source})",
                                   type="MCPServerUnavailable")
        answer = await self.mcp.call(entry.server, entry.tool, args,
                                     {"idempotency_key": delivery.CALL_KEY.get()}, mark)
        if not answer.ok:
            return _error(answer.code, answer.text)
        return ToolOutcome(ok=True, summary=answer.text)


def _error(code: str, message: str) -> ToolOutcome:
    return ToolOutcome(ok=False, code=code, summary=f"Error [{code}]: {message}")

