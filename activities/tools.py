"""`run_tool`: one model tool call, carried out against the job's workspace.

The call's arguments are read from the stored assistant message (they never
enter workflow history); the full result is stored as the conversation's tool
message; the workflow gets a short `ToolOutcome`. Mistakes the model made come
back as tool errors with a code; storage failures raise and are retried.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities import document_tools, workspace_tools
from activities.conversation_store import ConversationStore
from activities.s3_store import S3Store
from activities.tool_registry import parse_arguments
from activities.workspace_files import ToolError, WorkspaceFiles
from workflows.types import RUN_TOOL, ToolOutcome, ToolRequest

Handler = Callable[..., Awaitable[workspace_tools.ToolResult]]
HANDLERS: dict[str, Handler] = {
    "read_file": workspace_tools.read_file,
    "write_file": workspace_tools.write_file,
    "list_files": workspace_tools.list_files,
    "search_files": workspace_tools.search_files,
    "delete_file": workspace_tools.delete_file,
    "todo_write": workspace_tools.todo_write,
    "extract_document_text": document_tools.extract_document_text,
    "chunk_document": document_tools.chunk_document,
}


class ToolActivities:
    def __init__(self, s3: S3Store, store: ConversationStore) -> None:
        self.s3 = s3
        self.store = store

    @activity.defn(name=RUN_TOOL)
    async def run_tool(self, req: ToolRequest) -> ToolOutcome:
        ws, conv = req.workspace, req.conversation
        assistant = await self.store.get(ws, conv, req.assistant_index)
        call = next((c for c in assistant.get("tool_calls") or [] if c["id"] == req.call_id),
                    None)
        if call is None:
            raise ApplicationError(f"tool call {req.call_id} not found in message "
                                   f"{req.assistant_index} of {conv}", non_retryable=True)
        outcome = await self._run(req, call["function"]["arguments"])
        text = outcome.summary
        await self.store.put(ws, conv, req.result_index,
                             {"role": "tool", "tool_call_id": req.call_id, "content": text})
        outcome.summary = text[:200]
        return outcome

    async def _run(self, req: ToolRequest, raw: str) -> ToolOutcome:
        handler = HANDLERS.get(req.name)
        if handler is None:
            return _error("unknown_tool", f"tool '{req.name}' has no implementation here")
        args, problem = parse_arguments(req.name, raw)
        if args is None:
            return _error("invalid_arguments", problem or "bad arguments")
        try:
            result = await handler(WorkspaceFiles(self.s3, req.workspace), args, req.limits)
        except ToolError as e:
            return _error(e.code, str(e))
        return ToolOutcome(ok=True, summary=result.text, changed=result.changed)


def _error(code: str, message: str) -> ToolOutcome:
    return ToolOutcome(ok=False, code=code, summary=f"Error [{code}]: {message}")


def raw_json(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)
