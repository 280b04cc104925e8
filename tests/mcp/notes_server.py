"""An MCP server written with the mcp SDK, for the tests: `notes`.

    python tests/mcp/notes_server.py stdio
    python tests/mcp/notes_server.py http PORT TOKEN    # Streamable HTTP on 127.0.0.1:PORT/mcp,
                                                        # only with `Authorization: Bearer TOKEN`

Tools: `lookup(key)` (a fixed note; an unknown key is a ToolError: an `isError` result with
the message), `fail(reason)` (crashes: an `isError` result), `big(n)` (n characters),
`slow(seconds, marker)` (sleeps on its first call only), `pid()` (the server's pid),
`send(message, log, pause)` and `send_deduplicated(message, log, pause)` (an effect: a line
in `log` per execution, with the call's `_meta.idempotency_key`, then - the first time that
key is seen - a sleep of `pause` seconds; `send` is annotated destructive and not idempotent,
`send_deduplicated` idempotent: it executes a key once and answers repeats from its log).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

NOTES = {"alpha": "Alpha is the first letter.", "omega": "Omega is the last letter."}
server = MCPServer("notes")


@server.tool()
def lookup(key: str) -> str:
    """Look up a note by its key (alpha, omega)."""
    if key not in NOTES:
        raise ToolError(f"no note '{key}'; keys: {', '.join(NOTES)}")
    return NOTES[key]


@server.tool()
def fail(reason: str) -> str:
    """Always crashes (the model sees only that it failed)."""
    raise RuntimeError(reason)


@server.tool()
def big(n: int) -> str:
    """A text of n characters."""
    return ("0123456789" * (n // 10 + 1))[:n]


@server.tool()
async def slow(seconds: float, marker: str) -> str:
    """The first call (no file at `marker` yet) creates the file and sleeps `seconds`; later
    calls answer at once."""
    if Path(marker).exists():
        return "slept before"
    Path(marker).write_text(str(os.getpid()))
    await anyio.sleep(seconds)
    return "slept"


@server.tool()
def pid() -> int:
    """The server process's id."""
    return os.getpid()


def _key(ctx: Context) -> str:
    meta = ctx.request_context.meta or {}
    return str(meta.get("idempotency_key") or "")


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True,
                                         idempotentHint=False))
async def send(message: str, log: str, pause: float, ctx: Context) -> str:
    """Send a message (it must not go out twice)."""
    path, key = Path(log), _key(ctx)
    seen = path.read_text() if path.exists() else ""
    with path.open("a") as f:
        f.write(f"send {key} {message}\n")
    if f" {key} " not in seen:
        await anyio.sleep(pause)
    return f"sent: {message}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))
async def send_deduplicated(message: str, log: str, pause: float, ctx: Context) -> str:
    """Send a message once per idempotency key (a repeat is answered, not sent)."""
    path, key = Path(log), _key(ctx)
    if key and path.exists() and f" {key} " in path.read_text():
        return f"already sent: {message}"
    with path.open("a") as f:
        f.write(f"dedup {key} {message}\n")
    await anyio.sleep(pause)
    return f"sent: {message}"


def http(port: int, token: str) -> None:
    import uvicorn

    app = server.streamable_http_app()

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if sys.argv[1] == "http":
        http(int(sys.argv[2]), sys.argv[3])
    else:
        server.run("stdio")
