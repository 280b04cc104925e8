"""The job's live event stream (docs/live.md) on a real Temporal dev server, SeaweedFS and
the scripted model streaming its answer: `switchback follow` shows the model's text as it
arrives, once; the reply the workflow gets is the one a plain call gets; the events name
their call and attempt; a reader joining late resumes from an offset; without `live.tokens`
the endpoint is asked for no stream and no signal reaches the history."""

from __future__ import annotations

import asyncio
import io
import os
import signal

from temporalio.api.enums.v1 import EventType

from switchback.operate.following import follow
from switchback.operate.live import Transcript, job_events
from tests.conftest import running_worker
from tests.scripts import call, full_job, step
from tests.test_durability import wait_started, worker_process

WORDS = " ".join(f"w{i:03d}" for i in range(60))  # 300 characters, each word unique
SAID = f"Let me look around first. {WORDS}."



async def start_streaming_job(start_job, model_server):
    """A job whose first answer streams slowly (120 ms a chunk) with token batches every
    0.2 s, its model call quick to notice a dead worker (2 s heartbeats)."""
    return await start_job(slow_script(chunk_ms=120), model_server, instructions="x",
                           documents=[], config={"extends": "creator", "live_token_seconds": 0.2,
                                                 "llm": {"heartbeat_timeout_seconds": 2}})


def slow_script(chunk_ms: int = 40) -> list[dict]:
    """The job's first answer written slowly (8 characters a chunk): ~1.6 s."""
    script = full_job(1)
    script[0] = {**step(call("list_files"), content=SAID), "chunk_ms": chunk_ms}
    return script


async def events_of(client, job_id: str) -> list[tuple[int, dict]]:
    return [e async for e in job_events(client, job_id, follow=False)]


async def test_follow_shows_the_streamed_text_once(client, task_queue, start_job,
                                                   model_server, s3):
    async with running_worker(client, task_queue):
        handle = await start_job(slow_script(), model_server, instructions="x", documents=[],
                                 config={"extends": "creator", "live_token_seconds": 0.2})
        out = io.StringIO()
        status = await asyncio.wait_for(follow(client, handle.id, from_start=True, out=out), 90)
        events = await events_of(client, handle.id)
    assert status == 0
    printed = out.getvalue()
    assert printed.count(WORDS) == 1, printed
    assert "[model] Let me look around first." in printed and "-> list_files" in printed
    assert "== end: completed" in printed
    kinds = [e["kind"] for _, e in events]
    assert {"phase", "todos", "model.start", "model.delta", "model.end", "tool.call",
            "tool.result", "end"} <= set(kinds)
    assert [o for o, _ in events] == list(range(len(events)))  # offsets, none skipped
    first = events[[e["kind"] for _, e in events].index("model.delta")][1]["call"]
    mine = [e for _, e in events if e.get("call") == first]
    # tokens arrived before the reply, in more than one batch, then the reply itself
    assert [e["kind"] for e in mine][0] == "model.start" and mine[-1]["kind"] == "model.end"
    assert sum(e["kind"] == "model.delta" for e in mine) >= 2
    assert all(e["attempt"] == 1 and e["at"] for e in mine)
    t = Transcript()
    for _, e in events:
        t.add(e)
    assert t.text(first) == SAID and t.calls[first].tool_calls == ["list_files"]
    # the endpoint was asked for a stream with usage; what the workflow got is the same reply
    requests = model_server.requests(handle.id)
    assert requests[0]["stream"] is True
    assert requests[0]["stream_options"] == {"include_usage": True}
    answer = [m for m in requests[1]["messages"] if m["role"] == "assistant"][-1]
    assert answer["content"] == SAID
    assert answer["tool_calls"][0]["function"]["name"] == "list_files"
    history = await handle.fetch_history()
    signals = [e for e in history.events
               if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
    assert 2 <= len(signals) <= 12  # a batch every 0.2 s of a ~1.6 s reply, none for the rest


async def test_a_late_reader_resumes_from_its_offset_and_no_tokens_by_default(
        client, task_queue, start_job, model_server, s3):
    async with running_worker(client, task_queue):
        handle = await start_job(slow_script(5), model_server, instructions="x", documents=[],
                                 config="creator")
        await handle.result()
        events = await events_of(client, handle.id)
        later = [e async for e in job_events(client, handle.id, from_offset=5)]
    assert later == events[5:]
    assert not any(e["kind"] == "model.delta" for _, e in events)  # live.tokens is off
    assert "stream" not in model_server.requests(handle.id)[0]
    ends = [e for _, e in events if e["kind"] == "model.end"]
    assert ends[0]["text"] == SAID  # the reply's text, from the workflow
    history = await handle.fetch_history()
    assert not any(e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
                   for e in history.events)


async def test_a_worker_killed_mid_reply_the_retry_replaces_the_text(
        client, task_queue, start_job, model_server, s3, tmp_path):
    """The worker is SIGKILLed while the model writes its first answer; a second worker's
    attempt 2 streams it again. `follow`, reading all along, shows the text once; the
    events say attempt 2 began, and the fold keeps attempt 2's text only."""
    out, seen = io.StringIO(), []
    first = worker_process(client, task_queue, tmp_path / "w1.log")
    second = None
    try:
        await wait_started(tmp_path / "w1.log")
        handle = await start_streaming_job(start_job, model_server)
        following = asyncio.create_task(follow(client, handle.id, from_start=True, out=out))
        async for _, ev in job_events(client, handle.id, poll_interval=0.05):
            seen.append(ev)
            if ev["kind"] == "model.delta":  # a batch of the first answer has arrived
                break
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        second = worker_process(client, task_queue, tmp_path / "w2.log")
        result = await asyncio.wait_for(handle.result(), 120)
        status = await asyncio.wait_for(following, 60)  # (the worker answers its reads)
        events = await events_of(client, handle.id)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert result.status == "completed" and status == 0
    printed = out.getvalue()
    assert printed.count("Let me look around first.") == 1, printed
    assert printed.count(WORDS) == 1, printed
    assert "void" not in printed  # the same text again: nothing to take back
    call = seen[-1]["call"]
    starts = [e["attempt"] for _, e in events if e["kind"] == "model.start"
              and e["call"] == call]
    assert max(starts) >= 2, starts  # the retried attempt announced itself
    t = Transcript()
    for _, e in events:
        t.add(e)
    assert t.text(call) == SAID and t.calls[call].attempt >= 2


async def test_a_failed_job_ends_its_stream_saying_so(client, task_queue, start_job,
                                                      model_server, s3):
    script = [{"error": {"status": 400, "message": "bad request"}}]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config="creator")
        out = io.StringIO()
        status = await asyncio.wait_for(follow(client, handle.id, from_start=True, out=out), 60)
        events = await events_of(client, handle.id)
    assert status == 1
    end = events[-1][1]
    assert end["kind"] == "end" and end["status"] == "failed"
    assert "bad request" in end["summary"]
    assert "== end: failed" in out.getvalue()
