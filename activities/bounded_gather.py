"""`bounded_gather`: an async call on every item, at most N at a time, results in order.

For the storage work that fans out (search_files' reads, a snapshot's copies, a document's
chunk writes): one loop per worker task, no task per item, so 10,000 items cost N tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def bounded_gather(items: Sequence[T], call: Callable[[T], Awaitable[R]],
                         limit: int) -> list[R]:
    """`call(item)` for every item, at most `limit` at a time; the results in the items'
    order. The first failure cancels the others and is raised as it is (not in an
    ExceptionGroup: callers catch a ToolError or StorageUnavailable as from a plain loop)."""
    out: list[R | None] = [None] * len(items)
    todo = iter(enumerate(items))

    async def worker() -> None:
        for i, item in todo:
            out[i] = await call(item)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(limit, len(items))):
                group.create_task(worker())
    except BaseExceptionGroup as group_error:
        raise group_error.exceptions[0] from None
    return out  # type: ignore[return-value]  # every slot was filled
