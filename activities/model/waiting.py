"""Waiting for the model endpoint, and what its HTTP errors mean: translated here, once.

`heartbeating(aw)` awaits a call (or CPU work in a thread) while heartbeating;
`with_heartbeat(aw)` also turns the endpoint's errors into Temporal retry decisions:

    429                                    retryable, Retry-After (capped) as the next delay
    408, 409, 5xx, timeouts, no connection  retryable (ModelUnavailable)
    400/413 saying the prompt is too long   ContextExceeded: the caller compacts and asks again
    other 4xx                              non-retryable (ModelRequestRejected)

`count_identical` makes an HTTP 500 that the identical request got `limit` times in a row
non-retryable: the request is what fails (see activities/model/calls.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import Awaitable
from datetime import timedelta
from typing import TypeVar

import openai
from temporalio import activity
from temporalio.exceptions import ApplicationError

from switchback.activities.redaction import redact

T = TypeVar("T")


async def heartbeating(aw: Awaitable[T]) -> T:
    """Await `aw` (the model's answer, token counting in a thread), heartbeating meanwhile."""
    task = asyncio.ensure_future(aw)
    interval = 2.0
    info = activity.info()
    if info.is_local:  # a local activity has no heartbeat: its workflow task is its lease
        return await task
    if info.heartbeat_timeout:
        interval = max(0.5, min(10.0, info.heartbeat_timeout.total_seconds() / 3))
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=interval)
            if done:
                return task.result()
            activity.heartbeat()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


class ContextExceeded(Exception):
    """The endpoint refused the prompt as longer than its context window."""


# what servers say when a prompt does not fit: llama.cpp, OpenAI, vLLM, Ollama, LM Studio, ...
_CONTEXT = re.compile(r"exceed\w* (the )?(available )?context|context[_ ](length|size|window)"
                      r"|maximum context|too many tokens|prompt is too long|n_ctx", re.I)


async def with_heartbeat(aw: Awaitable[T], max_delay: float | None = None) -> T:
    """The model call: heartbeating, its errors become Temporal retry decisions (a
    Retry-After of at most `max_delay` seconds: an endpoint cannot park a job for a day).
    What the endpoint said has the worker's credentials redacted, and the errors are not
    chained: the cause's text is unredacted."""
    try:
        return await heartbeating(aw)
    except openai.APIStatusError as e:
        if e.status_code in (400, 413) and _CONTEXT.search(f"{e.message} {e.body}"):
            raise ContextExceeded(redact(f"model endpoint answered HTTP {e.status_code}: "
                                         f"{_message(e)}")) from None
        raise _translate(e, max_delay) from None
    except (openai.APITimeoutError, openai.APIConnectionError) as e:
        raise ApplicationError(redact(f"model endpoint unreachable: {type(e).__name__}: {e}"),
                               type="ModelUnavailable") from None


def count_identical(e: ApplicationError, fingerprint: str, limit: int) -> ApplicationError:
    """`e`, or a non-retryable error when the previous attempts got the same HTTP 500 for
    the same prompt: `limit` in a row means the request itself fails (the count is kept in
    the attempt's last heartbeat, which the next attempt reads)."""
    if e.type != "ModelUnavailable" or not e.message.startswith("model endpoint answered "
                                                                 "HTTP 500"):
        return e
    sig = hashlib.sha256(f"{fingerprint}\x00{e.message}".encode()).hexdigest()[:24]
    details = activity.info().heartbeat_details
    last = details[0] if details and isinstance(details[0], dict) else {}
    count = int(last.get("count", 0)) + 1 if last.get("failure") == sig else 1
    activity.heartbeat({"failure": sig, "count": count})
    if count < limit:
        return e
    return ApplicationError(f"{e.message} - the identical request got this answer {count} "
                            "times in a row, so it is the request that fails, not the "
                            "endpoint; not retried",
                            type="ModelRequestRejected", non_retryable=True)


def _message(e: openai.APIStatusError) -> str:
    """The server's own words: the openai client's "Error code: 500 - " prefix dropped."""
    text = " ".join(str(e.message).split())
    return re.sub(r"^Error code: \d+ - ", "", text)[:300]


def _translate(e: openai.APIStatusError, max_delay: float | None) -> ApplicationError:
    status = e.status_code
    text = redact(f"model endpoint answered HTTP {status}: {_message(e)}")
    if status == 429:
        delay = _retry_after(e.response.headers.get("retry-after"), max_delay)
        return ApplicationError(text, type="ModelRateLimited",
                                next_retry_delay=timedelta(seconds=delay) if delay else None)
    if status in (408, 409) or status >= 500:
        return ApplicationError(text, type="ModelUnavailable")
    return ApplicationError(text, type="ModelRequestRejected", non_retryable=True)


def _retry_after(value: str | None, max_delay: float | None) -> float | None:
    try:
        delay = max(0.0, float(value)) if value else None
        return min(delay, max_delay) if delay is not None and max_delay is not None else delay
    except ValueError:
        return None
