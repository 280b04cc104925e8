"""At-most-once tool calls: an intent before the call, the outcome after it.

A tool activity that dies mid-call (the worker SIGKILLed, the tool server killed, a
timeout) is retried, and a retry runs the tool again: right for reads and idempotent
writes (`at_least_once`), wrong for a tool that sends, books, pays or appends. For an
`at_most_once` tool (switchback.tools.Delivery: the tool's own declaration, an MCP
server's annotations, or the operator's word in configs/mcp.yaml) every attempt first
creates `.switchback/intents/<key>.json` with a conditional write:

- created: this attempt is the first; it calls the tool and records the outcome there;
- there, with an outcome: an earlier attempt called the tool and finished; its outcome is
  the answer, the tool is not called again;
- there, without one: an earlier attempt started the call and did not finish. Whether it
  took effect is unknown, so the tool is not called again: the model gets `unknown_outcome`
  ("check before repeating it").

Every call also carries an idempotency key, the same for every attempt of that call
(`ToolContext.idempotency_key`, an MCP call's `_meta.idempotency_key`): a service that
deduplicates by it makes the call take effect exactly once, whatever the delivery.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
from collections.abc import Awaitable, Callable

from activities.storage.s3 import PreconditionFailed, S3Store
from workflows.contract import ToolOutcome, ToolRequest, layout

AT_MOST_ONCE = "at_most_once"
UNKNOWN = "unknown_outcome"
# the idempotency key of the call this task is running (read by packages.tool_context)
CALL_KEY: contextvars.ContextVar[str] = contextvars.ContextVar("switchback_call_key",
                                                                default="")


def idempotency_key(req: ToolRequest) -> str:
    """The same for every attempt of one call: (job, conversation, call id)."""
    raw = f"{req.workspace.job_id}\n{req.conversation}\n{req.call_id}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def intent_path(req: ToolRequest) -> str:
    return f"{layout.INTERNAL}/intents/{idempotency_key(req)}.json"


def unknown(name: str) -> ToolOutcome:
    return ToolOutcome(ok=False, code=UNKNOWN, summary=(
        f"Error [{UNKNOWN}]: an earlier attempt of this call of '{name}' started it and did "
        "not finish (its worker or the tool stopped), so it may or may not have taken "
        "effect. It was not run again. Check whether it took effect before repeating it."))


async def at_most_once(s3: S3Store, req: ToolRequest,
                       call: Callable[[], Awaitable[ToolOutcome]]) -> ToolOutcome:
    """`call()` once per call across all its attempts (module docstring)."""
    ws = req.workspace
    key = layout.key(ws.job_id, intent_path(req))
    intent = {"tool": req.name, "conversation": req.conversation, "call_id": req.call_id}
    try:
        await s3.put(ws.bucket, key, json.dumps({**intent, "state": "started"}).encode(),
                     "application/json", if_none_match=True)
    except PreconditionFailed:
        earlier = json.loads(await s3.get(ws.bucket, key) or b"{}")
        if earlier.get("state") == "done" and isinstance(earlier.get("outcome"), dict):
            return ToolOutcome(**earlier["outcome"])
        return unknown(req.name)
    outcome = await call()
    done = {**intent, "state": "done", "outcome": outcome.model_dump(
        include={"ok", "code", "summary", "changed", "tools_added"})}
    await s3.put(ws.bucket, key, json.dumps(done).encode(), "application/json")
    return outcome
