"""The scripted model's streamed answers: a `chat.completion` body as the server-sent events
an OpenAI-compatible server sends for `stream: true` (`chat.completion.chunk`s, then
`data: [DONE]`).

The content goes out `chunk_chars` characters per chunk, each tool call as a first chunk with
its id and name and then its arguments in pieces of 25 times that; the last choice chunk has the
`finish_reason`; `usage` comes in a chunk of its own, with no choices, when the request asked
for it (`stream_options.include_usage`), as OpenAI and llama-server send it. A script step's
`chunk_ms` is slept between two chunks (devstack/scripted_model.py), so tests and demos see
the text arrive.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any


def _line(data: Any) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def sse_chunks(body: dict[str, Any], request: dict[str, Any],
               chunk_chars: int = 8) -> list[bytes]:
    """The events of `body` (a chat.completion object) for `request`, in order."""
    head = {"id": body.get("id", ""), "object": "chat.completion.chunk",
            "created": body.get("created", 0), "model": body.get("model", "scripted")}
    choice = body["choices"][0]
    message = choice.get("message") or {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _line({**head, "choices": [{"index": 0, "delta": delta,
                                           "finish_reason": finish, "logprobs": None}]})

    out = [chunk({"role": "assistant", "content": ""})]
    content = message.get("content") or ""
    out += [chunk({"content": content[i:i + chunk_chars]})
            for i in range(0, len(content), chunk_chars)]
    for n, tc in enumerate(message.get("tool_calls") or []):
        fn = tc.get("function") or {}
        out.append(chunk({"tool_calls": [{"index": n, "id": tc.get("id"), "type": "function",
                                          "function": {"name": fn.get("name"),
                                                       "arguments": ""}}]}))
        args, step = fn.get("arguments") or "", chunk_chars * 25
        out += [chunk({"tool_calls": [{"index": n, "function": {"arguments": args[i:i + step]}}]})
                for i in range(0, len(args), step)]
    out.append(chunk({}, choice.get("finish_reason") or "stop"))
    options = request.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") and body.get("usage"):
        out.append(_line({**head, "choices": [], "usage": body["usage"]}))
    out.append(b"data: [DONE]\n\n")
    return out


def write_stream(handler: BaseHTTPRequestHandler, body: Any, request: dict[str, Any],
                 chunk_ms: float) -> bool:
    """Send `body` (a chat.completion) streamed when the request asked for it, `chunk_ms`
    between two chunks, then close the connection (False: not asked, nothing sent). A client
    gone meanwhile (a worker killed mid-reply) ends it quietly."""
    if request.get("stream") is not True or not isinstance(body, dict) \
            or body.get("object") != "chat.completion":
        return False
    chunks = sse_chunks(body, request)
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    try:
        for n, data in enumerate(chunks):
            if n and chunk_ms:
                time.sleep(chunk_ms / 1000)
            handler.wfile.write(data)
            handler.wfile.flush()
    except OSError:
        pass
    return True
