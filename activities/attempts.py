"""When an activity attempt stops counting: its deadline, as this worker measures it.

An attempt past its start-to-close timeout (or one Temporal has cancelled) is a "zombie":
the workflow no longer waits for it, a retry may run and later steps may follow, so what it
writes must not become the job's state. `AttemptDeadline`, the worker's outermost activity
interceptor, notes each attempt's deadline when the attempt begins on this worker, on the
worker's monotonic clock: it begins here after Temporal started its timeout, so the
deadline noted is never earlier than Temporal's (a live attempt is never taken for a
zombie; no clock of another machine is read). `expired()` tells the attempt running in the
current task whether it is past it.

The workspace write fence uses it (activities/storage/files.py): a write of a file the
attempt has not seen goes out as a create (`If-None-Match: *`, no HEAD first); only when
that finds the file there does the attempt look up its version to replace it - unless the
attempt has expired by then, for then what is there may be a later step's.
"""

from __future__ import annotations

import time
from contextvars import ContextVar

from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

_deadline: ContextVar[float | None] = ContextVar("attempt_deadline", default=None)


def begin(timeout_seconds: float | None) -> None:
    """Note the current attempt's deadline, `timeout_seconds` from now (None: none)."""
    _deadline.set(None if timeout_seconds is None else time.monotonic() + timeout_seconds)


def expired() -> bool:
    """True when the current activity attempt is past its deadline or was cancelled."""
    deadline = _deadline.get()
    if deadline is not None and time.monotonic() >= deadline:
        return True
    return activity.in_activity() and activity.is_cancelled()


class AttemptDeadline(Interceptor):
    """Worker interceptor: every activity attempt's deadline noted as it begins."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next)


class _Inbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput):
        timeout = activity.info().start_to_close_timeout
        begin(timeout.total_seconds() if timeout else None)
        return await super().execute_activity(input)
