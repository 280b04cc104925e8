"""Reading a job's live event stream (workflows/contract/stream.py, docs/live.md).

`job_events(client, job_id)` yields `(offset, event)` from the job's Workflow Stream: what is
retained from `from_offset` on, then (with `follow`) each event as it is published, across
continue-as-new, until the job has ended and its last events are read. It reads with the
stream's poll query by default (no history cost; `via="update"`: the stream's long-poll
update, faster, one update in the job's history per answered poll). A lost connection, a
worker restart or a poll that timed out is retried from the last offset read, so no event is
yielded twice and none is skipped (unless retention dropped it meanwhile: the stream then
resumes at the oldest one it keeps).

`Transcript` is the pure fold of those events into each call's text, with a retried model
call's earlier attempts replaced: what `switchback follow` prints and any consumer can reuse.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from temporalio.api.common.v1 import Payload
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.contrib.workflow_streams import PollInput, PollResult, WorkflowStreamClient
from temporalio.service import RPCError, RPCStatusCode

from switchback.workflows.contract.stream import TOPIC

POLL = "__temporal_workflow_stream_poll"  # the stream's poll (an update and a query)
_GIVE_UP = (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT,
            RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNAUTHENTICATED)
_RETRIED = (RPCError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError,
            WorkflowQueryFailedError, TimeoutError, ConnectionError)


async def job_events(client: Client, job_id: str, *, from_offset: int = 0, follow: bool = True,
                     via: Literal["query", "update"] = "query", poll_interval: float = 0.3,
                     retry_delay: float = 1.0) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    """The job's events from `from_offset`: (offset, event object). Without `follow`: only
    those published so far. A transient failure is retried every `retry_delay` seconds from
    the offset after the last one yielded; a job that does not exist raises RPCError.

    `via="query"` (the default) reads with the stream's poll query every `poll_interval`
    seconds while there is nothing new: a query writes nothing to the job's history, however
    many read and for however long. `via="update"` long-polls with the stream's update
    (`WorkflowStreamClient.subscribe`): an event arrives within ~0.1 s, but every poll is an
    update in the job's history (two events, and a workflow task when the job is idle), so a
    reader costs history in proportion to how often it is answered (docs/live.md)."""
    reads = _by_query(client, job_id, from_offset, follow, poll_interval, retry_delay) \
        if via == "query" else _by_update(client, job_id, from_offset, follow, poll_interval,
                                          retry_delay)
    async for found in reads:
        yield found


async def _by_query(client: Client, job_id: str, nxt: int, follow: bool, interval: float,
                    retry_delay: float) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    handle = client.get_workflow_handle(job_id)
    converter = client.data_converter.payload_converter
    closing = False  # the job has ended: one last read, then stop
    failed = 0  # reads that failed in a row after the job ended
    while True:
        try:
            res = await handle.query(POLL, PollInput(topics=[TOPIC], from_offset=nxt),
                                     result_type=PollResult)
        except _RETRIED as e:
            if isinstance(e, RPCError) and e.status in _GIVE_UP:
                raise
            if await _ended(handle):
                failed += 1
                if failed >= 3:  # an ended job's events are read by a worker: none runs
                    raise StreamUnreadable(f"{job_id} has ended, and no worker answers to "
                                           f"read its events from offset {nxt} on") from e
            await asyncio.sleep(retry_delay)
            continue
        failed = 0
        for item in res.items:
            if item.offset < nxt:
                continue
            nxt = item.offset + 1
            payload = Payload()
            payload.ParseFromString(base64.b64decode(item.data))
            data = converter.from_payload(payload)
            if isinstance(data, dict):
                yield item.offset, data
        nxt = max(nxt, res.next_offset)
        if res.more_ready:
            continue
        if not follow or closing:
            return
        if not res.items:
            closing = await _ended(handle)
            if not closing:
                await asyncio.sleep(interval)


class StreamUnreadable(Exception):
    """The job's events cannot be read now (it ended and no worker answers queries)."""


async def _ended(handle: Any) -> bool:
    try:
        return bool((await handle.describe()).status != WorkflowExecutionStatus.RUNNING)
    except _RETRIED as e:
        if isinstance(e, RPCError) and e.status in _GIVE_UP:
            raise
        return False


async def _by_update(client: Client, job_id: str, nxt: int, follow: bool, interval: float,
                     retry_delay: float) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    stream = WorkflowStreamClient.create(client, job_id)
    end: int | None = None
    if not follow:
        end = await _retrying(stream.get_offset, retry_delay)
        if end <= nxt:
            return
    while True:
        try:
            async for item in stream.subscribe(TOPIC, from_offset=nxt,
                                               poll_cooldown=timedelta(seconds=interval)):
                if item.offset < nxt:  # (a poll answered twice: never yield it again)
                    continue
                nxt = item.offset + 1
                if isinstance(item.data, dict):
                    yield item.offset, item.data
                if end is not None and nxt >= end:
                    return
            return  # the job ended and its retained events are read
        except _RETRIED as e:
            if isinstance(e, RPCError) and e.status in _GIVE_UP:
                raise
            await asyncio.sleep(retry_delay)


async def _retrying(read: Any, delay: float, tries: int = 30) -> int:
    for n in range(tries):
        try:
            return int(await read())
        except _RETRIED as e:
            if (isinstance(e, RPCError) and e.status in _GIVE_UP) or n == tries - 1:
                raise
            await asyncio.sleep(delay)
    raise AssertionError("unreachable")


@dataclass
class CallText:
    """One call's text as the stream told it: the attempt shown and what it wrote."""

    call: str
    attempt: int = 1
    text: str = ""
    done: bool = False  # model.end seen: `text` is the whole reply
    replaced: int = 0  # earlier attempts whose text was dropped
    tool_calls: list[str] = field(default_factory=list)


class Transcript:
    """Events folded into each model call's text, retried attempts replaced (docs/live.md).

    `add(event)` returns the call's CallText when the event changed one, else None."""

    def __init__(self) -> None:
        self.calls: dict[str, CallText] = {}

    def add(self, ev: dict[str, Any]) -> CallText | None:
        kind, call = ev.get("kind"), str(ev.get("call") or "")
        if kind not in ("model.start", "model.delta", "model.end") or not call:
            return None
        raw = ev.get("attempt")
        attempt = raw if isinstance(raw, int) else 1
        ct = self.calls.get(call)
        if ct is None:
            ct = self.calls[call] = CallText(call=call, attempt=attempt)
        if kind == "model.end":  # authoritative: the whole reply, whatever deltas said
            ct.text, ct.done = str(ev.get("text") or ""), True
            ct.attempt = max(ct.attempt, attempt)
            ct.tool_calls = [str(n) for n in ev.get("tool_calls") or []]
            return ct
        if ct.done or attempt < ct.attempt:  # a late event of a failed (or finished) attempt
            return None
        if attempt > ct.attempt:  # a new attempt: the failed one's text is void
            ct.attempt, ct.text, ct.replaced = attempt, "", ct.replaced + 1
        if kind == "model.delta":
            ct.text += str(ev.get("text") or "")
        return ct

    def text(self, call: str) -> str:
        ct = self.calls.get(call)
        return ct.text if ct else ""
