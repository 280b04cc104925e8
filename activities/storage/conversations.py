"""Conversations by reference: messages live in the job's workspace, not in history.

Layout, under the job's prefix:

    .switchback/conversations/<key>/system.md       the phase's system prompt
    .switchback/conversations/<key>/summary.md      the running summary (layer 4), if any
    .switchback/conversations/<key>/000000.json     message 0 (OpenAI message dict)
    .switchback/conversations/<key>/000001.json     ...

Each message is written once at an index the workflow assigned, so a retried
activity overwrites the same object and a new worker can rebuild any
conversation from S3. A per-process LRU cache keeps the hot path (the same
worker running step after step) free of re-reads; a miss falls back to S3.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable
from dataclasses import dataclass, field

from activities.storage.s3 import S3Store
from workflows.contract import WorkspaceRef, layout


class ConversationMissing(RuntimeError):
    """A message the workflow says exists is not in the store (retryable: it may lag)."""


@dataclass
class _Conv:
    texts: dict[str, str] = field(default_factory=dict)  # system.md, summary.md
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

    async def put_text(self, ws: WorkspaceRef, conv: str, name: str, text: str) -> None:
        """`system.md` or `summary.md` of a conversation."""
        await self._write_text(ws, conv, name, text)
        self._entry(ws, conv).texts[name] = text

    async def text(self, ws: WorkspaceRef, conv: str, name: str) -> str:
        entry = self._entry(ws, conv)
        if name not in entry.texts:
            data = await self.s3.get(ws.bucket, self.key(ws, conv, name))
            if data is None:
                raise ConversationMissing(f"{name} of conversation '{conv}' is missing")
            entry.texts[name] = data.decode()
        return entry.texts[name]

    def stage(self, ws: WorkspaceRef, conv: str, index: int, message: dict) -> Awaitable[None]:
        """Cache the message now; the returned awaitable stores it (the caller awaits it
        before it reports the message as stored)."""
        self._entry(ws, conv).messages[index] = message
        return self._write(ws, conv, index, message)

    def stage_text(self, ws: WorkspaceRef, conv: str, name: str, text: str) -> Awaitable[None]:
        self._entry(ws, conv).texts[name] = text
        return self._write_text(ws, conv, name, text)

    async def put(self, ws: WorkspaceRef, conv: str, index: int, message: dict) -> None:
        await self._write(ws, conv, index, message)
        self._entry(ws, conv).messages[index] = message

    def _write(self, ws: WorkspaceRef, conv: str, index: int, message: dict) -> Awaitable[None]:
        return self.s3.put(ws.bucket, self.key(ws, conv, layout.message_name(index)),
                           json.dumps(message, ensure_ascii=False).encode(), "application/json")

    def _write_text(self, ws: WorkspaceRef, conv: str, name: str, text: str) -> Awaitable[None]:
        return self.s3.put(ws.bucket, self.key(ws, conv, name), text.encode(),
                           "text/markdown; charset=utf-8")

    async def find(self, ws: WorkspaceRef, conv: str, index: int) -> dict | None:
        """A stored message, or None (another job's recording, say); not cached."""
        body = await self.s3.get(ws.bucket, self.key(ws, conv, layout.message_name(index)))
        return None if body is None else json.loads(body)

    async def get(self, ws: WorkspaceRef, conv: str, index: int) -> dict:
        return (await self.messages(ws, conv, index + 1, start=index))[0]

    async def messages(self, ws: WorkspaceRef, conv: str, length: int,
                       start: int = 0) -> list[dict]:
        """Messages start..length-1, from the cache where possible."""
        entry = self._entry(ws, conv)
        missing = [i for i in range(start, length) if i not in entry.messages]
        if missing:
            bodies = await asyncio.gather(*(self.s3.get(
                ws.bucket, self.key(ws, conv, layout.message_name(i))) for i in missing))
            for i, body in zip(missing, bodies, strict=True):
                if body is None:
                    raise ConversationMissing(f"message {i} of conversation '{conv}' of job "
                                              f"'{ws.job_id}' is missing from the store")
                entry.messages[i] = json.loads(body)
        return [entry.messages[i] for i in range(start, length)]
