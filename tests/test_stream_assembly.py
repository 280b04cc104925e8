"""A streamed reply put back together (activities/model/streaming.py): content and tool-call
deltas as OpenAI and llama-server send them, usage in the last chunk, the same stored
message as the plain answer; what cannot be read is ModelBadResponse. Pure: no server; the
scripted model's own stream (devstack/streamed_reply.py) is the round trip."""

from __future__ import annotations

import json
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from switchback.activities.model.replies import assistant_message
from switchback.activities.model.streaming import ReplyAssembler
from switchback.devstack.streamed_reply import sse_chunks


def fold(lines: list[str]) -> tuple[bytes, str]:
    r = ReplyAssembler()
    said = "".join(r.text_of(line) for line in lines)
    return r.body(), said


def test_openai_style_deltas_become_the_plain_answer() -> None:
    chunks = [
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                     "content": ""}}]},
        {"choices": [{"index": 0, "delta": {"content": "Let me "}}]},
        {"choices": [{"index": 0, "delta": {"content": "read it."}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_a", "type": "function",
             "function": {"name": "read_file", "arguments": ""}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": '{"path": '}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": '"a.md"}'}},
            {"index": 1, "id": "call_b", "function": {"name": "list_files",
                                                      "arguments": "{}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30},
         "timings": {"predicted_n": 30, "predicted_ms": 512.5}},
    ]
    lines = [f"data: {json.dumps(c)}" for c in chunks] + ["", ": keep-alive", "data: [DONE]"]
    body, said = fold(lines)
    assert said == "Let me read it."
    msg = assistant_message(body, 10_000, ("read_file", "list_files"))
    assert msg["content"] == "Let me read it."
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in msg["tool_calls"]] == [("call_a", "read_file", '{"path": "a.md"}'),
                                            ("call_b", "list_files", "{}")]
    assert msg["_meta"]["finish_reason"] == "tool_calls"
    assert msg["_meta"]["usage"] == {"prompt_tokens": 120, "completion_tokens": 30}
    assert msg["_meta"]["timings"] == {"predicted_n": 30, "predicted_ms": 512.5}


def test_the_scripted_models_stream_round_trips() -> None:
    plain: dict[str, Any] = {
             "id": "x", "object": "chat.completion", "created": 1, "model": "scripted",
             "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                 "role": "assistant", "content": "Héllo 😀 wörld " * 5,
                 "tool_calls": [{"id": "call_1", "type": "function", "function": {
                     "name": "write_file",
                     "arguments": json.dumps({"path": "a.md", "content": "x" * 300})}}]}}],
             "usage": {"prompt_tokens": 5, "completion_tokens": 7}}
    request = {"stream": True, "stream_options": {"include_usage": True}}
    lines = b"".join(sse_chunks(plain, request)).decode().split("\n")
    body, said = fold(lines)
    assert said == plain["choices"][0]["message"]["content"]
    streamed = assistant_message(body, 10_000, ("write_file",))
    direct = assistant_message(json.dumps(plain).encode(), 10_000, ("write_file",))
    assert streamed == direct
    no_usage = b"".join(sse_chunks(plain, {"stream": True})).decode()
    assert '"usage"' not in no_usage  # only when asked for


@pytest.mark.parametrize("line", ["data: {not json", 'data: {"error": {"message": "boom"}}',
                                  "data: [1, 2]"])
def test_a_stream_that_cannot_be_read_is_a_bad_response(line: str) -> None:
    with pytest.raises(ApplicationError) as info:
        ReplyAssembler().text_of(line)
    assert info.value.type == "ModelBadResponse" and not info.value.non_retryable
