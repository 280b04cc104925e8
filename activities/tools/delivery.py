"""At-most-once tool calls: an intent just before the call, the outcome after it.

A tool activity that dies mid-call (the worker SIGKILLed, the tool server killed, a
timeout) is retried, and a retry runs the tool again: right for reads and idempotent
writes (`at_least_once`), wrong for a tool that sends, books, pays or appends. For an
`at_most_once` tool (switchback.tools.Delivery: the tool's own declaration, an MCP
server's annotations, or the operator's word in configs/mcp.yaml) an attempt first looks
for `.switchback/intents/<key>.json`:

- there, with an outcome: an earlier attempt called the tool and finished; its outcome is
  the answer, the tool is not called again;
- there, without one: an earlier attempt was about to call the tool and did not finish.
  Whether it took effect is unknown, so the tool is not called again: the model gets
  `unknown_outcome` ("check before repeating it");
- not there: the attempt calls the tool, and creates the intent (a conditional write, with
  this attempt's nonce) at the last moment before the call is sent - after the tool's
  server was reached - so a failure before sending leaves no intent. The outcome, redacted,
  is recorded after.

Every call also carries an idempotency key, the same for every attempt of that call
(`ToolContext.idempotency_key`, an MCP call's `_meta.idempotency_key`): a service that
deduplicates by it makes the call take effect exactly once, whatever the delivery.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import uuid
from collections.abc import Awaitable, Callable

from switchback.activities.redaction import redact
from switchback.activities.storage.s3 import PreconditionFailed, S3Store
from switchback.workflows.contract import ToolOutcome, ToolRequest, layout

AT_MOST_ONCE = "at_most_once"
UNKNOWN = "unknown_outcome"
# the idempotency key of the call this task is running (read by packages.tool_context)
CALL_KEY: contextvars.ContextVar[str] = contextvars.ContextVar("switchback_call_key",
                                                                default="")
Mark = Callable[[], Awaitable[None]]  # called right before the call is sent


class EarlierAttempt(Exception):
    """The intent appeared between the look and the mark: another attempt is on it."""


def idempotency_key(req: ToolRequest) -> str:
    """The same for every attempt of one call: (job, conversation, assistant message, call
    id) - call ids repeat across a conversation's turns (a model's, or `sb_call_<n>`)."""
    raw = f"{req.workspace.job_id}\n{req.conversation}\n{req.assistant_index}\n{req.call_id}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def intent_path(req: ToolRequest) -> str:
    return f"{layout.INTERNAL}/intents/{idempotency_key(req)}.json"


def unknown(name: str) -> ToolOutcome:
    return ToolOutcome(ok=False, code=UNKNOWN, summary=(
        f"Error [{UNKNOWN}]: an earlier attempt of this call of '{name}' started it and did "
        "not finish (its worker or the tool stopped), so it may or may not have taken "
        "effect. It was not run again. Check whether it took effect before repeating it."))


async def _earlier(s3: S3Store, bucket: str, key: str, name: str) -> ToolOutcome | None:
    raw = await s3.get(bucket, key)
    if raw is None:
        return None
    earlier = json.loads(raw or b"{}")
    if earlier.get("state") == "done" and isinstance(earlier.get("outcome"), dict):
        return ToolOutcome(**earlier["outcome"])
    return unknown(name)


async def at_most_once(s3: S3Store, req: ToolRequest,
                       call: Callable[[Mark], Awaitable[ToolOutcome]]) -> ToolOutcome:
    """`call(mark)` once per call across all its attempts (module docstring); `call` awaits
    `mark()` right before it sends the call."""
    ws = req.workspace
    key = layout.key(ws.job_id, intent_path(req))
    found = await _earlier(s3, ws.bucket, key, req.name)
    if found is not None:
        return found
    nonce = uuid.uuid4().hex  # this attempt's: its own write, retried by S3Wire, is not earlier
    intent = {"tool": req.name, "conversation": req.conversation, "call_id": req.call_id}

    async def mark() -> None:
        try:
            await s3.put(ws.bucket, key, json.dumps(
                {**intent, "state": "started", "nonce": nonce}).encode(), "application/json",
                if_none_match=True)
        except PreconditionFailed:
            raw = await s3.get(ws.bucket, key)
            if raw is None or json.loads(raw).get("nonce") != nonce:
                raise EarlierAttempt from None
    try:
        outcome = await call(mark)
    except EarlierAttempt:
        return await _earlier(s3, ws.bucket, key, req.name) or unknown(req.name)
    done = {**intent, "state": "done", "nonce": nonce, "outcome": outcome.model_dump(
        include={"ok", "code", "changed", "tools_added"}) | {"summary": redact(outcome.summary)}}
    await s3.put(ws.bucket, key, json.dumps(done).encode(), "application/json")
    return outcome
