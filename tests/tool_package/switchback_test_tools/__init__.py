"""Tools that count their executions, for tests/test_tool_delivery.py.

Each execution appends one line, `<tool> <idempotency key> <message>`, to the file
SWITCHBACK_TEST_TOOL_LOG names (nothing when it is unset), then - the first time a call key
is seen only - sleeps SWITCHBACK_TEST_TOOL_SLEEP seconds: the effect has happened, the
answer has not, so a test can kill the worker or let the attempt time out right there.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from switchback import ToolContext, tool


async def _execute(name: str, message: str, ctx: ToolContext) -> str:
    log = os.environ.get("SWITCHBACK_TEST_TOOL_LOG")
    if not log:
        return f"{name}: no log configured"
    path = Path(log)
    seen = path.read_text(encoding="utf-8") if path.exists() else ""
    with path.open("a", encoding="utf-8") as f:
        f.write(f"{name} {ctx.idempotency_key} {message}\n")
    if f" {ctx.idempotency_key} " not in seen:
        await asyncio.sleep(float(os.environ.get("SWITCHBACK_TEST_TOOL_SLEEP") or 0))
    return f"{name} done: {message}"


@tool(delivery="at_most_once")
async def test_send(message: str, ctx: ToolContext) -> str:
    """Send a message (a side effect that must not happen twice).

    Args:
        message: what to send
    """
    return await _execute("test_send", message, ctx)


@tool
async def test_touch(message: str, ctx: ToolContext) -> str:
    """Record a message (safe to repeat).

    Args:
        message: what to record
    """
    return await _execute("test_touch", message, ctx)
