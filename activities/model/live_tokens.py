"""The model's text, published to the job's live stream while the model writes it.

`answer(client, ...)` with an interval makes the call with `stream: true`
(activities/model/chat.py) and publishes what the model wrote, in batches `interval` seconds
apart, to the job's Workflow Stream (topic `events`, workflows/contract/stream.py): the
first batch of an attempt opens
with `model.start` (the call's key and this attempt), then `model.delta`s. Each batch is one
signal in the job's history, so the cost scales with how long the reply takes, not with its
tokens: a reply written within the first interval sends nothing at all - the workflow's
`model.end` carries its text - and what is left when the reply ends is not sent either,
for the same reason. A later attempt's `model.start` tells readers to drop an earlier one's
text (operate/live.py: Transcript).

Publishing is best effort: a batch that cannot be sent is dropped, and the call goes on. The
signal goes out through the worker's client, so its payload passes the job's codec. Each
batch has the worker's credentials redacted (activities/redaction.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio import activity
from temporalio.contrib.workflow_streams import WorkflowStreamClient

from switchback.activities.model.chat import ChatClient
from switchback.activities.redaction import redact
from switchback.workflows.contract.stream import TEXT_CHARS, TOPIC, event


class TokenBatches:
    """Text of one model call attempt, sent in batches while the reply is written."""

    def __init__(self, call: str, interval: float) -> None:
        info = activity.info()
        self.call, self.attempt, self.interval = call, info.attempt, interval
        self.pending: list[str] = []
        self.started = False  # model.start sent
        self.sent = 0  # batches sent
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client: WorkflowStreamClient | None = None

    def feed(self, text: str) -> None:
        self.pending.append(text)

    async def __aenter__(self) -> TokenBatches:
        self._task = asyncio.create_task(self._batches())
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop; a batch being sent is let finish (so none arrives after the reply)."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    async def _batches(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.interval)
                return
            await self._send()

    async def _send(self) -> None:
        if not self.pending:
            return
        text, self.pending = redact("".join(self.pending)), []
        try:
            if self._client is None:
                self._client = WorkflowStreamClient.from_within_activity(
                    batch_interval=timedelta(hours=1), max_retry_duration=timedelta(seconds=30))
            topic = self._client.topic(TOPIC)
            at = datetime.now(UTC).isoformat(timespec="milliseconds")
            if not self.started:
                topic.publish(event("model.start", call=self.call, attempt=self.attempt, at=at))
                self.started = True
            for i in range(0, len(text), TEXT_CHARS):
                topic.publish(event("model.delta", call=self.call, attempt=self.attempt, at=at,
                                    text=text[i:i + TEXT_CHARS]))
            await self._client.flush()
            self.sent += 1
        except Exception as e:  # the stream is for people watching: never fail the call
            activity.logger.warning("live stream: a batch of %s was not sent: %s", self.call, e)


async def answer(client: ChatClient, call: str, interval: float, **request: Any) -> bytes:
    """The model call (`create`'s arguments): with an `interval`, streamed and its text
    published as it comes; without, a plain call."""
    if interval <= 0:
        return await client.create(**request)
    async with TokenBatches(call, interval) as batches:
        return await client.stream(on_text=batches.feed, **request)
