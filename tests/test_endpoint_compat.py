"""Jobs against an endpoint that answers the way llama-server did (tests/fixtures/llama_server/):
the scripted model replays the recorded shapes and refuses requests as the real server does.

Tool calls in every variant real servers return, arguments cut off at `max_tokens` never sent
again, an identical request that fails the same way not retried ten times, a context-length
400 that compacts, a slow first token, a turn cut off at the token limit, a model that repeats
itself stopped with the reason in `state`.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.client import WorkflowFailureError

from switchback.activities.model.endpoints import SlowEndpoint, Target
from tests.conftest import running_worker
from tests.llama import answer, reject_bad_arguments, replay, response
from tests.scripts import bootstrap, call, finish, step, tactical
from tests.test_bad_model_input import tool_messages

CONFIG = {"extends": "creator", "breakers": {"no_progress_steps": 0}}


def sent_arguments(model_server, job_id: str) -> list[str]:
    return [tc["function"]["arguments"] for r in model_server.requests(job_id)
            for m in r["messages"] for tc in m.get("tool_calls") or []]


async def test_every_tool_call_shape_drives_a_job(client, task_queue, start_job, model_server,
                                                  s3):
    """Structured calls with random ids and `content: ""`, several in one turn (the recorded
    three reads), a ```json fence (the GGUF's own template), <tool_call> tags and a bare JSON
    answer: each runs as the tool call it is."""
    fence = response("g_own_template_fenced_json")["body"]["choices"][0]["message"]["content"]
    work = [
        answer([("write_file", {"path": "notes/a.md", "content": "A"}),
                ("write_file", {"path": "notes/b.md", "content": "B"}),
                ("todo_complete", {"notes": "two files"})], seed=1),
        replay("b_parallel_tool_calls"),  # read notes/a.md, b.md, c.md in one turn
        answer(content=fence.replace("notes/todo.md", "notes/a.md"), seed=2),
        answer(content='<tool_call>\n{"name": "write_file", "arguments": {"path": "notes/c.md",'
                       ' "content": "C"}}\n</tool_call>', seed=3),
        answer(content='{"name": "todo_complete", "arguments": {"notes": "c written"}}', seed=4),
    ] + tactical(3)
    async with running_worker(client, task_queue):
        handle = await start_job(bootstrap() + work + finish(), model_server, config=CONFIG,
                                 instructions="x", documents=[])
        result = await asyncio.wait_for(handle.result(), 120)
    assert result.status == "completed"
    for name, text in (("a", b"A"), ("b", b"B"), ("c", b"C")):
        assert await s3.get("switchback", f"{handle.id}/notes/{name}.md") == text
    msgs = tool_messages(model_server, handle.id)
    assert "A" in msgs  # the fenced read_file of notes/a.md ran
    assert any("file_not_found" in m and "notes/c.md" in m for m in msgs)  # c.md not yet there
    # the text calls went back to the model as structured calls (what the server expects)
    assert '{"path": "notes/c.md", "content": "C"}' in sent_arguments(model_server, handle.id)


async def test_cut_off_arguments_are_never_sent_again(client, task_queue, start_job,
                                                      model_server, s3):
    """The recorded cut-off `write_file` (finish_reason length): the model reads why it did
    not run; the server, which answers any history holding it with HTTP 500, never sees it."""
    raw = response("d_truncated_tool_arguments")["body"]["choices"][0]["message"][
        "tool_calls"][0]["function"]["arguments"]
    script = bootstrap() + [replay("d_truncated_tool_arguments")] + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(None, None, config=CONFIG, instructions="x", documents=[])
        model_server.set_script(handle.id, script, server=reject_bad_arguments())
        result = await asyncio.wait_for(handle.result(), 120)
    assert result.status == "completed"
    assert raw not in sent_arguments(model_server, handle.id)
    assert any(m.startswith("Error [invalid_arguments]: bad tool call: the arguments of "
                            "'write_file' were cut off at the token limit")
               for m in tool_messages(model_server, handle.id))
    assert await s3.get("switchback", f"{handle.id}/notes/long.md") is None


async def test_a_plan_cut_off_at_the_token_limit_is_kept_to_its_last_whole_line(
        client, task_queue, start_job, model_server, s3):
    """The 1.5B model's main_plan.md was cut off at max_tokens twice in a row and dropped each
    time: now its whole lines are written with a note where it was cut, its todo is done
    (the write was what it asked for), and the server never sees the broken arguments."""
    raw = ('{"path": "main_plan.md", "content": "# Plan\\n\\n1. Write notes/apples.md\\n'
           '2. Write notes/bananas.md\\n3. Write output/summ')
    script = bootstrap()
    script[3] = answer([("write_file", raw)], finish_reason="length", seed=5)
    async with running_worker(client, task_queue):
        handle = await start_job(None, None, config=CONFIG, instructions="x", documents=[])
        model_server.set_script(handle.id, script + tactical(5) + finish(),
                                server=reject_bad_arguments())
        result = await asyncio.wait_for(handle.result(), 120)
    assert result.status == "completed"
    assert raw not in sent_arguments(model_server, handle.id)
    # finish() rewrites main_plan.md at the end: the cut-off write is in phase 1's messages
    assert any(m.startswith("The files that todo asks for are written, so the workflow "
                            "marked it done. Todo 2 done.")
               for r in model_server.requests(handle.id) for m in
               [x.get("content") or "" for x in r["messages"] if x["role"] == "user"])
    kept = [json.loads(a) for a in sent_arguments(model_server, handle.id)
            if '"main_plan.md"' in a and "cut off here" in a]
    assert kept and kept[0]["content"] == (
        "# Plan\n\n1. Write notes/apples.md\n2. Write notes/bananas.md\n(cut off here: the "
        "rest of this write went past the token limit, max_tokens)\n")


async def test_an_identical_request_that_fails_the_same_way_is_not_retried_ten_times(
        client, task_queue, start_job, model_server, s3):
    """llama-server's 500 ("Failed to parse tool call arguments as JSON") to the same request:
    three answers in a row, then the job fails saying so, instead of ten over minutes."""
    script = bootstrap()[:3] + [replay("e_history_with_truncated_arguments")] * 10
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), 120)
    why = str(failed.value.cause)
    assert "HTTP 500: Failed to parse tool call arguments as JSON" in why
    assert "the identical request got this answer 3 times in a row" in why
    keys = [r["_call_key"] for r in model_server.requests(handle.id)]
    assert keys.count(keys[-1]) == 3  # three attempts of the failing call, not ten
    error = json.loads(await s3.get("switchback", f"{handle.id}/output/error.json"))
    assert error["code"] == "model_call_failed"


async def test_a_context_length_error_compacts_instead_of_failing(client, task_queue, start_job,
                                                                  model_server, s3):
    """The recorded 400 (`exceeds the available context size`): the older turns are folded
    into a summary and the call is made again."""
    reads = [step(call("read_file", path="instructions.md")) for _ in range(5)]
    script = (bootstrap() + reads + [replay("f_context_exceeded"),
                                     {"content": "SUMMARY: read instructions.md 5 times.",
                                      "for_call": "summary"}] + tactical(5) + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 120)
    assert result.status == "completed"
    reqs = model_server.requests(handle.id)
    refused = next(i for i, r in enumerate(reqs) if ".summary" in r["_call_key"]) - 1
    assert len([m for m in reqs[refused]["messages"] if m["role"] == "tool"]) == 5
    again = reqs[refused + 2]
    assert again["_call_key"] == reqs[refused]["_call_key"]
    assert "SUMMARY: read instructions.md" in again["messages"][1]["content"]
    assert await s3.get("switchback", f"{handle.id}/summaries/phase_2_001.md") is not None


async def test_a_prompt_that_cannot_be_compacted_fails_clearly(client, task_queue, start_job,
                                                               model_server):
    script = [replay("f_context_exceeded")]  # the first call of the job: nothing to fold
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), 60)
    why = str(failed.value.cause)
    assert "exceeds the available context size (1024 tokens)" in why
    assert "the conversation is too short to summarize" in why
    assert len(model_server.requests(handle.id)) == 1  # not retried


async def test_a_slow_first_token_is_waited_for(client, task_queue, start_job, model_server):
    """A local server that takes 8 s before its first byte (the heartbeat timeout is 3 s):
    one attempt, heartbeating meanwhile."""
    slow = {**answer([("list_files", {})], seed=5), "latency_ms": 8000}
    script = bootstrap()[:1] + [slow] + bootstrap()[1:] + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        assert (await asyncio.wait_for(handle.result(), 120)).status == "completed"
    keys = [r["_call_key"] for r in model_server.requests(handle.id)]
    assert len(keys) == len(set(keys))  # no call was made twice


def test_a_slow_endpoints_timeout_grows_with_the_call():
    t = Target(endpoint="local", base_url="http://x/v1", api_key="k", timeout=1800,
               slow=SlowEndpoint(first_token_seconds=60, prompt_tokens_per_second=10,
                                 completion_tokens_per_second=2))
    assert t.call_timeout(1000, 512) == 60 + 100 + 256
    assert t.call_timeout(20_000, 1024) == 1800  # never more than the endpoint allows
    fixed = Target(endpoint="default", base_url="http://x/v1", api_key="k", timeout=300)
    assert fixed.call_timeout(100_000, 4096) == 300


async def test_a_turn_cut_off_at_the_token_limit_is_answered(client, task_queue, start_job,
                                                             model_server):
    cut = answer(content="Here is the plan:\n\n1. Read the notes\n2. Write the", seed=6,
                 finish_reason="length")
    script = bootstrap()[:2] + [cut] + bootstrap()[2:] + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, instructions="x",
                                 documents=[])
        assert (await asyncio.wait_for(handle.result(), 120)).status == "completed"
    users = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
             if m["role"] == "user"]
    assert any(u.startswith("Your answer was cut off at the token limit (max_tokens)")
               for u in users)


async def test_an_answer_that_echoes_tool_responses_is_told_it_runs_nothing(
        client, task_queue, start_job, model_server):
    """Eval round 13, react runs 1, 7 and 10: refused at its first job_complete, the 1.5B
    model answered with the turn's tool results echoed as `<tool_response>` text until the
    nudges ran out. Such an answer gets prompts/echo_nudge.md, not the plain nudge."""
    echo = step(content="<tool_response>\nError [file_not_found]: 'notes/a.md' does not "
                "exist; list_files shows what is there\n</tool_response>")
    script = [echo, step(content="I will write it."),
              step(call("write_file", path="notes/a.md", content="# A\n")),
              step(call("job_complete", summary="done", deliverables=["notes/a.md"],
                        confidence=0.9, notes=""))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config={
            "extends": "creator", "strategy": "react"}, instructions="x", documents=[])
        assert (await asyncio.wait_for(handle.result(), 120)).status == "completed"
    users = [m["content"] for m in model_server.requests(handle.id)[-1]["messages"]
             if m["role"] == "user"]
    assert users[1].startswith("Your answer only repeats tool responses (`<tool_response>` "
                               "blocks). A tool's response comes from the tool after you call "
                               "it: writing one yourself runs nothing"), users
    assert users[2].startswith("You answered without calling a tool."), users


async def test_a_model_that_repeats_itself_is_stopped_with_the_reason(client, task_queue,
                                                                      start_job, model_server,
                                                                      s3):
    """The same recorded call, again and again (new random ids each time): a note, then a
    rewind, then the job stops as stuck; `state` and completion.json say why."""
    same = [answer([("read_file", {"path": "notes/todo.md"})], seed=i) for i in range(40)]
    async with running_worker(client, task_queue):
        handle = await start_job(bootstrap() + same, model_server, config=CONFIG,
                                 instructions="x", documents=[])
        result = await asyncio.wait_for(handle.result(), 120)
        state = await handle.query("state")
    assert result.status == "stuck"
    assert "Loop detected a third time (the same tool call across 5 steps)" in result.summary
    trips = state["breakers"]["trips"]
    assert [t["action"] for t in trips if t["breaker"] == "repetition"] == [
        "note", "rewind", "stop"]
    assert state["status"] == "stuck"
    users = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
             if m["role"] == "user"]
    assert any(u.startswith("You repeated the same tool call in the last 5 steps") for u in users)
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert completion["status"] == "stuck" and "Loop detected" in completion["summary"]


async def test_a_model_that_takes_two_calls_by_turns_is_stopped(client, task_queue, start_job,
                                                                 model_server):
    """Eval round4: asked for main_plan.md, the 1.5B model wrote output/summary.md, had its
    todo_complete refused, and did both again for 40 steps; windows of 5 never held one call,
    so no breaker tripped. Two calls taking turns over 10 steps now count as repetition
    (patch repetition-cycles): a note, a rewind, then the job stops as stuck."""
    pair = [step(call("write_file", path="output/summary.md", content="# Summary\n")),
            step(call("todo_complete", notes="the plan"))]
    async with running_worker(client, task_queue):
        handle = await start_job(bootstrap()[:3] + pair * 40, model_server, config=CONFIG,
                                 instructions="x", documents=[])
        result = await asyncio.wait_for(handle.result(), 120)
        state = await handle.query("state")
    assert result.status == "stuck"
    assert ("Loop detected a third time (the same two tool calls by turns across 10 steps)"
            in result.summary)
    assert [t["action"] for t in state["breakers"]["trips"] if t["breaker"] == "repetition"
            ] == ["note", "rewind", "stop"]
    users = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
             if m["role"] == "user"]
    assert any(u.startswith("You repeated the same two tool calls by turns in the last 10 "
                            "steps") for u in users)

