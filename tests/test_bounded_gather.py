"""bounded_gather: results in order, at most N calls at once, and the first failure raised
as it is - a ToolError from one of chunk_document's 16 concurrent writes must reach the
model as that tool error, not as an ExceptionGroup that fails the activity."""

from __future__ import annotations

import asyncio

import pytest

from switchback.activities.bounded_gather import bounded_gather
from switchback.activities.storage.files import ToolError


async def test_results_in_order_and_at_most_limit_at_once():
    running, peak = 0, 0

    async def call(i: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.001 * (i % 3))
        running -= 1
        return i * i
    assert await bounded_gather(list(range(50)), call, 4) == [i * i for i in range(50)]
    assert peak == 4
    assert await bounded_gather([], call, 4) == []


async def test_the_first_failure_is_raised_as_it_is_and_stops_the_rest():
    started = []

    async def call(i: int) -> int:
        started.append(i)
        if i == 3:
            raise ToolError("file_too_large", "chunk 3 is too large")
        await asyncio.sleep(0.01)
        return i
    with pytest.raises(ToolError, match="chunk 3 is too large"):
        await bounded_gather(list(range(100)), call, 4)
    assert len(started) < 100
