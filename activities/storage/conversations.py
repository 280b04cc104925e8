"""Conversations by reference: messages live in the job's workspace, not in history.

Layout, under the job's prefix:

    .switchback/conversations/<key>/system.md       the phase's system prompt
    .switchback/conversations/<key>/summary_<n>.md  the running summary of messages 0..n-1
                                                    (summary.md in jobs from before)
    .switchback/conversations/<key>/000000.json     message 0 (OpenAI message dict)
    .switchback/conversations/<key>/000001.json     ...

A message the workflow made that the next model call stores (a short tool result, a
nudge) rides in that call's answer, `_meta.inline` ({index: message}), instead of an
object of its own: one PUT per step instead of two. A call
that answers `needs_compaction` (no answer to carry them) stores them as objects. Readers
take a missing index from the next answer that carries it, and a carried message wins over
an object at its index: that object is a tool attempt's long result the workflow did not
take (a retried attempt's short one was taken inline). Every reader reads a range that
ends with (or past) the carrying answer.

Who writes what, so that a late ("zombie") activity attempt never changes a message
the workflow built on:

- messages the workflow made (kickoff, nudges, control-tool and short tool results,
  the system prompt) are the same in every attempt: `stage`/`stage_text` write them
  as they are, over anything there;
- what an activity produced (the model's answer, a long tool result, a summary) is
  written once: `put_once`/`put_text_once` create the key only if it is missing (S3
  If-None-Match). An attempt that finds it written adopts the stored version and
  answers from it, so the first writer wins and the workflow's view and the store
  agree; a zombie that writes second is refused.

A new worker can rebuild any conversation from S3. A per-process LRU cache keeps the
hot path (the same worker running step after step) free of re-reads; a miss falls
back to S3.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable
from dataclasses import dataclass, field

from switchback.activities.storage.s3 import PreconditionFailed, S3Store
from switchback.workflows.contract import WorkspaceRef, layout


class ConversationMissing(RuntimeError):
    """A message the workflow says exists is not in the store (retryable: it may lag)."""


@dataclass
class _Conv:
    texts: dict[str, str] = field(default_factory=dict)  # system.md, summaries
    messages: dict[int, dict] = field(default_factory=dict)


class ConversationStore:
    def __init__(self, s3: S3Store, max_cached: int = 512) -> None:
        self.s3 = s3
        self._cache: OrderedDict[tuple[str, str, str], _Conv] = OrderedDict()
        self._max = max_cached

    def _entry(self, ws: WorkspaceRef, conv: str) -> _Conv:
        k = (ws.bucket, ws.job_id, conv)
        entry = self._cache.get(k)
        if entry is None:
            entry = self._cache[k] = _Conv()
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(k)
        return entry

    @staticmethod
    def key(ws: WorkspaceRef, conv: str, name: str) -> str:
        return layout.key(ws.job_id, layout.conversation_path(conv, name))

    async def put_text_once(self, ws: WorkspaceRef, conv: str, name: str, text: str) -> str:
        """Create text `name` (a summary) unless an earlier attempt did; the stored text."""
        try:
            await self._write_text(ws, conv, name, text, once=True)
        except PreconditionFailed:
            data = await self.s3.get(ws.bucket, self.key(ws, conv, name))
            text = (data or b"").decode("utf-8", "replace")
        self._entry(ws, conv).texts[name] = text
        return text

    async def text(self, ws: WorkspaceRef, conv: str, name: str) -> str:
        entry = self._entry(ws, conv)
        if name not in entry.texts:
            data = await self.s3.get(ws.bucket, self.key(ws, conv, name))
            if data is None:
                raise ConversationMissing(f"{name} of conversation '{conv}' is missing")
            entry.texts[name] = data.decode()
        return entry.texts[name]

    async def summary(self, ws: WorkspaceRef, conv: str, upto: int) -> str:
        """The running summary of messages 0..upto-1 (summary.md in older jobs)."""
        try:
            return await self.text(ws, conv, layout.summary_name(upto))
        except ConversationMissing:
            return await self.text(ws, conv, layout.LEGACY_SUMMARY)

    def keep(self, ws: WorkspaceRef, conv: str, index: int, message: dict) -> dict:
        """A message the workflow made that the next answer carries: cached now, stored
        with that answer (`_meta.inline`, see `put_once`); the message as stored."""
        message, _ = _encode(message)
        self._entry(ws, conv).messages[index] = message
        return message

    def stage(self, ws: WorkspaceRef, conv: str, index: int, message: dict) -> Awaitable[str]:
        """A message the workflow made: cache it now; the returned awaitable stores it (the
        caller awaits it before it reports the message as stored)."""
        message, data = _encode(message)
        self._entry(ws, conv).messages[index] = message
        return self.s3.put(ws.bucket, self.key(ws, conv, layout.message_name(index)), data,
                           "application/json")

    def stage_text(self, ws: WorkspaceRef, conv: str, name: str, text: str) -> Awaitable[str]:
        self._entry(ws, conv).texts[name] = text
        return self._write_text(ws, conv, name, text)

    async def put_once(self, ws: WorkspaceRef, conv: str, index: int, message: dict, *,
                       cache: bool = True) -> tuple[dict, bool]:
        """Store an activity's message at `index` unless an earlier attempt did: (the stored
        message, True if it is this one). `cache=False` for messages a later model call
        may replace (a tool result the workflow could take inline instead)."""
        message, data = _encode(message)
        key = self.key(ws, conv, layout.message_name(index))
        try:
            await self.s3.put(ws.bucket, key, data, "application/json", if_none_match=True)
            ours = True
        except PreconditionFailed:
            body = await self.s3.get(ws.bucket, key)
            if body is None:  # written and deleted since? nothing deletes messages
                raise ConversationMissing(f"message {index} of '{conv}' vanished") from None
            message, ours = json.loads(body), False
        if cache:
            self._entry(ws, conv).messages[index] = message
        return message, ours

    def _write_text(self, ws: WorkspaceRef, conv: str, name: str, text: str,
                    once: bool = False) -> Awaitable[str]:
        return self.s3.put(ws.bucket, self.key(ws, conv, name),
                           text.encode("utf-8", "replace"), "text/markdown; charset=utf-8",
                           if_none_match=once)

    async def find(self, ws: WorkspaceRef, conv: str, index: int) -> dict | None:
        """A stored message, or None (another job's recording, say); not cached."""
        body = await self.s3.get(ws.bucket, self.key(ws, conv, layout.message_name(index)))
        return None if body is None else json.loads(body)

    async def get(self, ws: WorkspaceRef, conv: str, index: int) -> dict:
        return (await self.messages(ws, conv, index + 1, start=index))[0]

    async def messages(self, ws: WorkspaceRef, conv: str, length: int,
                       start: int = 0) -> list[dict]:
        """Messages start..length-1, from the cache where possible; a message with no object
        of its own from the answer after it that carries it."""
        entry = self._entry(ws, conv)
        missing = [i for i in range(start, length) if i not in entry.messages]
        if missing:
            bodies = await asyncio.gather(*(self._get(ws, conv, i) for i in missing))
            for i, body in zip(missing, bodies, strict=True):
                if body is not None:
                    entry.messages[i] = body
                    entry.messages.update(carried(body))
            for i in missing:
                if i not in entry.messages:
                    await self._carrier(ws, conv, i, entry)
        return [entry.messages[i] for i in range(start, length)]

    async def _get(self, ws: WorkspaceRef, conv: str, index: int) -> dict | None:
        body = await self.s3.get(ws.bucket, self.key(ws, conv, layout.message_name(index)))
        return None if body is None else json.loads(body)

    async def _carrier(self, ws: WorkspaceRef, conv: str, index: int, entry: _Conv) -> None:
        """Find the answer after `index` that carries message `index` (cold reads only)."""
        for j in range(index + 1, index + 1 + MAX_CARRIED):
            body = entry.messages.get(j) or await self._get(ws, conv, j)
            if body is None:
                continue
            entry.messages.setdefault(j, body)
            entry.messages.update({k: m for k, m in carried(body).items()
                                   if k not in entry.messages})
            if index in entry.messages or body.get("role") == "assistant":
                break
        if index not in entry.messages:
            raise ConversationMissing(f"message {index} of conversation '{conv}' of job "
                                      f"'{ws.job_id}' is missing from the store")


MAX_CARRIED = 64  # an answer carries at most the messages since the answer before it


def carried(message: dict) -> dict[int, dict]:
    """The messages an answer carries (`_meta.inline`), by index."""
    inline = (message.get("_meta") or {}).get("inline")
    if not isinstance(inline, dict):
        return {}
    return {int(k): m for k, m in inline.items() if str(k).isdigit() and isinstance(m, dict)}


def _encode(message: dict) -> tuple[dict, bytes]:
    """(the message, its JSON bytes); text that is not valid Unicode becomes '?'."""
    text = json.dumps(message, ensure_ascii=False)
    try:
        return message, text.encode("utf-8")
    except UnicodeEncodeError:
        data = text.encode("utf-8", "replace")
        return json.loads(data), data
