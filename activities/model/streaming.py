"""A streamed Chat Completions reply (`stream: true`), put back together as one answer.

The endpoint sends server-sent events, `data: <chunk>` lines ending with `data: [DONE]`, in
OpenAI's `chat.completion.chunk` format: each chunk's first choice has a `delta` with a piece
of `content` and/or pieces of `tool_calls` (by `index`: the first piece has the call's `id` and
`function.name`, the next ones more of `function.arguments`), a `finish_reason` on the last;
`usage` (asked for with `stream_options.include_usage`) comes in a last chunk with no choices;
llama-server adds its `timings` there.

`ReplyAssembler` folds those lines into the body a non-streamed call would have answered (a
`chat.completion` object, as bytes), so activities/model/replies.py reads both alike and the
reply the workflow gets is the same either way. What cannot be read (a line that is not JSON,
an `error` object in the stream, more than MAX_BODY_BYTES) is `ModelBadResponse`, retried
like the same fault in a plain answer.
"""

from __future__ import annotations

import json
from typing import Any

from switchback.activities.model.replies import MAX_BODY_BYTES, bad_response, snippet

MAX_CALLS = 256  # tool-call indexes beyond this are a broken stream


class ReplyAssembler:
    """Feed it the response's lines; `text_of(line)` is the content the line added."""

    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.content: list[str] | None = None
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: Any = None
        self.extra: dict[str, Any] = {}  # usage, timings
        self.size = 0
        self.done = False

    def text_of(self, line: str) -> str:
        """Take one line of the stream; the text the model added in it ('' for none)."""
        line = line.strip()
        if not line.startswith("data:"):
            return ""  # blank separators, `event:`/`id:` fields and `:` comments
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return ""
        self.size += len(data)
        if self.size > MAX_BODY_BYTES:
            raise bad_response(f"a stream of over {MAX_BODY_BYTES:,} bytes")
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):
            raise bad_response(f"a stream line that is not JSON: {snippet(data.encode())}") \
                from None
        if not isinstance(chunk, dict):
            raise bad_response(f"a stream chunk that is not an object: {snippet(data.encode())}")
        if "error" in chunk:
            raise bad_response(f"an error in the stream: {snippet(data.encode(), 300)}")
        for key in ("id", "created", "model"):
            if key in chunk and key not in self.head:
                self.head[key] = chunk[key]
        for key in ("usage", "timings"):
            if isinstance(chunk.get(key), dict):
                self.extra[key] = chunk[key]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        choice = choices[0]
        if choice.get("finish_reason") is not None:
            self.finish_reason = choice["finish_reason"]
        delta: dict[str, Any] = next((d for d in (choice.get("delta"), choice.get("message"))
                                      if isinstance(d, dict)), {})
        for piece in delta.get("tool_calls") or []:
            self._call_piece(piece)
        text = delta.get("content")
        if isinstance(text, str) and text:
            self.content = (self.content or []) + [text]
            return text
        if text == "" and self.content is None:
            self.content = []
        return ""

    def _call_piece(self, piece: Any) -> None:
        if not isinstance(piece, dict):
            return
        index = piece.get("index", len(self.calls))
        if not isinstance(index, int) or not 0 <= index < MAX_CALLS:
            raise bad_response(f"a tool-call index out of range ({index!r})")
        call = self.calls.setdefault(index, {"type": "function",
                                             "function": {"name": "", "arguments": ""}})
        if isinstance(piece.get("id"), str) and piece["id"]:
            call["id"] = piece["id"]
        fn = piece.get("function")
        if isinstance(fn, dict):
            if isinstance(fn.get("name"), str):
                call["function"]["name"] += fn["name"]
            args = fn.get("arguments")
            if isinstance(args, str):
                call["function"]["arguments"] += args
            elif isinstance(args, dict):  # a whole object at once (some servers)
                call["function"]["arguments"] += json.dumps(args, ensure_ascii=False)

    def body(self) -> bytes:
        """The answer as a non-streamed call's body."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if self.content is None else "".join(self.content)}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return json.dumps({**self.head, "object": "chat.completion", "choices": [
            {"index": 0, "message": message, "finish_reason": self.finish_reason}],
            **self.extra}).encode()  # (ASCII escapes: a lone surrogate stays readable)
