"""switchback's activity interceptors on a shared worker: switchback's activities only.

A worker the plugin adds switchback to also runs the user's own activities. switchback's
interceptors (attempt deadlines, sticky resets on retries, the workspace guard, metrics and
log context) are about its jobs; `NotFor(inner, types)` applies `inner` to every activity
but those of `types` (the user's, as registered), which run as if switchback were absent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)


class NotFor(Interceptor):
    """`inner`'s activity interceptor, except for the activity types `types`."""

    def __init__(self, inner: Interceptor, types: Iterable[str]) -> None:
        self.inner = inner
        self.types = frozenset(types)

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Choose(next, self.inner.intercept_activity(next), self.types)


class _Choose(ActivityInboundInterceptor):
    """`wrapped` (inner's chain, ending in `plain`) for switchback's activities, `plain` for
    the others. `init` goes through `wrapped`, which passes it on to `plain`."""

    def __init__(self, plain: ActivityInboundInterceptor, wrapped: ActivityInboundInterceptor,
                 types: frozenset[str]) -> None:
        super().__init__(wrapped)
        self.plain = plain
        self.types = types

    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        self.next.init(outbound)

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        if activity.info().activity_type in self.types:
            return await self.plain.execute_activity(input)
        return await self.next.execute_activity(input)
