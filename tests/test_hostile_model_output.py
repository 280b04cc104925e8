"""No model output kills a job: each hostile answer is a tool error the model reads (and the job
goes on), or a classified model error Temporal retries - and, if it persists, a clean failure.

The scripted model sends `arguments` strings verbatim and `raw` steps as the whole 200 body,
so every answer here is what an endpoint could really send.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError

from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical
from tests.test_bad_model_input import tool_messages

BIG = 10 * 1024 * 1024
BIG_ARGS = json.dumps({"path": "big.md", "content": "x" * BIG})
CONFIG = {"extends": "creator", "breakers": {"no_progress_steps": 0}}


def raw_call(name: str, arguments: str) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def completion(message: dict) -> dict:
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}


def errors_for(msgs: list[str], code: str) -> list[str]:
    return [m for m in msgs if m.startswith(f"Error [{code}]")]


async def test_hostile_tool_arguments_are_tool_errors(client, task_queue, start_job,
                                                      model_server, s3):
    nested = '{"path": ' + "[" * 20_000 + "]" * 20_000 + ', "content": "x"}'
    hostile = [
        step(call("write_file", path="中" * 500, content="x")),  # 1,500 bytes: S3 refuses
        step(call("write_file", path="notes/" + "é" * 200 + ".md", content="x")),  # a 403-byte name
        raw_call("write_file", '{"path": "a\\ud800.md", "content": "x"}'),  # JSON-escaped
        raw_call("write_file", '{"path": "a.md", "content": "x\\udfff"}'),
        raw_call("write_file", '{"path": "a\ud800.md", "content": "x"}'),  # a raw surrogate
        step(call("write_file", path="a\x00b.md", content="x")),
        {**raw_call("write_file", BIG_ARGS),
         "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
        raw_call("write_file", nested),
        raw_call("write_file", '{"path": 5, "content": ["a"]}'),
        raw_call("write_file", '["a.md", "x"]'),
        raw_call("read_file", '{"path": "a.md", "offset": NaN}'),
        raw_call("read_file", '{"path": "a.md", "offset": ' + "9" * 5000 + "}"),
    ]
    script = bootstrap() + hostile + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 180)
    assert result.status == "completed"
    msgs = tool_messages(model_server, handle.id)
    too_long = errors_for(msgs, "path_too_long")
    assert "path is 1500 bytes of UTF-8 (500 characters); at most 512 bytes" in too_long[0]
    assert "is 403 bytes of UTF-8; a folder or file name may have at most 255" in too_long[1]
    invalid = errors_for(msgs, "invalid_arguments")
    assert ("the arguments of 'write_file' contain text that is not valid Unicode (a lone "
            "surrogate, in 'path'); send UTF-8 text") in invalid[0]
    assert "(a lone surrogate, in 'content')" in invalid[1]
    assert ("bad tool call: the arguments contain text that is not valid Unicode (a lone "
            "surrogate); send UTF-8 text") in invalid[2]
    assert "path contains a NUL or control character (U+0000 at character 1)" in \
        errors_for(msgs, "invalid_path")[0]
    assert (f"bad tool call: the arguments are {len(BIG_ARGS):,} characters, over the limit of "
            "200,000; send large content in several smaller calls") in invalid[3]
    assert "the arguments of 'write_file' are nested too deeply" in invalid[4]
    assert ("bad arguments for 'write_file': path: Input should be a valid string; content: "
            "Input should be a valid string") in invalid[5]
    assert "the arguments of 'write_file' must be a JSON object" in invalid[6]
    assert "not valid JSON (NaN is not a JSON number)" in invalid[7]
    assert "not valid JSON (a number has more than 4,300 digits)" in invalid[8]
    assert len(invalid) == 9
    keys = {o.key.split("/", 1)[1] for o in await s3.list("switchback", f"{handle.id}/")}
    assert not {"a.md", "big.md"} & keys and not any("中" in k for k in keys)
    # the 10 MB never went back to the model: its own message holds '{}' instead
    assert max(len(json.dumps(r)) for r in model_server.requests(handle.id)) < 1_000_000


async def test_odd_tool_call_entries(client, task_queue, start_job, model_server, s3):
    odd = [
        {"raw": completion({"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "write_file",  # no id
                                              "arguments": '{"path": "n1.md", "content": "1"}'}},
            {"id": "dup", "type": "function", "function": {  # arguments as an object
                "name": "write_file", "arguments": {"path": "n2.md", "content": "2"}}},
            {"id": "dup", "type": "function", "function": {  # a duplicate id
                "name": "write_file", "arguments": '{"path": "n3.md", "content": "3"}'}},
            {"id": "c4", "type": "function"},  # no function
            {"id": "c5", "function": {"name": "write file!", "arguments": "{}"}},
            {"id": "c6", "function": {"name": "read_file", "arguments": 7}},
            "not an object",
        ]})},
        {"raw": completion({"role": "assistant", "content": ["a", {"type": "text", "text": "b"}],
                            "tool_calls": None})},  # no tool call: nudged
        {"raw": completion({"role": "assistant"})},  # neither content nor tool calls: nudged
        {"content": "x" * BIG, "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
    ]
    script = bootstrap() + odd + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config={**CONFIG, "limits": {
            "max_nudges": 5}}, instructions="x", documents=[])
        result = await asyncio.wait_for(handle.result(), 180)
    assert result.status == "completed"
    for name, content in (("n1.md", b"1"), ("n2.md", b"2"), ("n3.md", b"3")):
        assert await s3.get("switchback", f"{handle.id}/{name}") == content
    msgs = tool_messages(model_server, handle.id)
    assert sum("unknown tool 'unnamed_tool'" in m for m in msgs) == 2
    assert any("unknown tool 'write_file_'" in m for m in msgs)
    assert any("Error [invalid_arguments]: bad tool call: the arguments must be a JSON object "
               "encoded as a string, got int" in m for m in msgs)
    sent = [m for r in model_server.requests(handle.id) for m in r["messages"]
            if m["role"] == "assistant"]
    assert any(m["content"] == "ab" for m in sent)
    cut = next(m["content"] for m in sent if m["content"].startswith("xxx"))
    assert cut.endswith(f"[... cut by switchback: the answer was {BIG:,} characters; at most "
                        "200,000 are kept]")
    odd_turn = next(m for m in sent if "c4" in {c["id"] for c in m.get("tool_calls") or []})
    ids = [c["id"] for c in odd_turn["tool_calls"]]
    assert len(ids) == len(set(ids)) == 7  # every call has an id of its own
    assert ids[0] == "sb_call_1" and ids[1] == "dup" and ids[2] == "sb_call_3"


BAD_BODIES = [  # (200 body, what the retried attempt's failure says)
    ("<html>502 Bad Gateway</html>", "a body that is not JSON: '<html>502 Bad Gateway</html>'"),
    ({"object": "chat.completion", "choices": []}, "no choices"),
    ({"choices": "none"}, "'choices' that is not a list"),
    ({"choices": [{"index": 0}]}, "a first choice that has no message object"),
    (completion({"role": "assistant", "tool_calls": "write_file"}),
     "'tool_calls' that is not a list (str)"),
    (["not", "an", "object"], "JSON that is not an object: '[\"not\", \"an\", \"object\"]'"),
    ('{"choices": ' + "[" * 50_000 + "]" * 50_000 + "}", "JSON nested too deeply"),
]


async def test_unreadable_answers_are_retried(client, task_queue, start_job, model_server, s3):
    script = bootstrap()
    for body, _ in BAD_BODIES:  # each answered once; the retry gets the next, good step
        script += [{"raw": body, "bind": False}, step(call("list_files"))]
    script += tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 180)
    assert result.status == "completed"
    retried = [e.activity_task_started_event_attributes.last_failure
               async for e in handle.fetch_history_events()
               if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
               and e.activity_task_started_event_attributes.attempt > 1]
    assert [f.application_failure_info.type for f in retried] == ["ModelBadResponse"] * 7
    for failure, (_, said) in zip(retried, BAD_BODIES, strict=True):
        assert failure.message == f"model endpoint answered 200 with {said}"


async def test_an_answer_that_stays_unreadable_fails_the_job_cleanly(
        client, task_queue, start_job, model_server, s3):
    script = bootstrap() + [{"raw": "<html>oops</html>"}] + finish()  # bound: every retry
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[], config={
            **CONFIG, "llm": {"retry": {"maximum_attempts": 2}}})
        with pytest.raises(WorkflowFailureError) as info:
            await asyncio.wait_for(handle.result(), 120)
    cause = info.value.cause
    assert cause.type == "SwitchbackJobFailed" and cause.details[0] == {
        "code": "model_call_failed"}
    assert cause.message == ("model call failed (phase 2 tactical step 1): ModelBadResponse: "
                             "model endpoint answered 200 with a body that is not JSON: "
                             "'<html>oops</html>'")
    error = json.loads(await s3.get("switchback", f"{handle.id}/output/error.json"))
    assert error["code"] == "model_call_failed" and error["phase"] == 2
