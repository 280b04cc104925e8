"""A retried activity's failure reaches the next attempt whole (codec/bounded_failures.py).

The dev server replaces a kept failure over its size limit with "Failure exceeds size
limit."; CI lost an MCP server's "Connection closed" that way when the checkout's path made
the stack traces longer. The control below shows the server does it to the SDK's default
converter; switchback's converter keeps the message.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.failure.v1 import Failure
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DefaultPayloadConverter
from temporalio.exceptions import ApplicationError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from switchback.activities.storage.payloads import data_converter
from switchback.codec.aes_gcm import ENV_KEYS, codec_from_env, with_codec
from switchback.codec.bounded_failures import MAX_TRACE, BoundedFailureConverter, clipped_message
from tests.test_codec import new_key

MESSAGE = "MCP server 'time': MCPError: Connection closed; the next attempt opens a new session"


def deep(n: int) -> None:
    """Raise MESSAGE from under `n` frames, caused by a ConnectionError from under as many
    (a traceback of ~6 KB each for n=40)."""
    try:
        nested(n, closed)
    except ConnectionError as e:
        raise ApplicationError(MESSAGE, type="MCPServerUnavailable") from e


def nested(n: int, then: Callable[[], None]) -> None:
    """`then()` under `n` more frames. Two functions take turns: the traceback module folds
    a run of identical frames into one line."""
    if n:
        deeper(n - 1, then)
    else:
        then()


def deeper(n: int, then: Callable[[], None]) -> None:
    nested(n, then)


def closed() -> None:
    raise ConnectionError("Connection closed " + "x" * 200)


def raise_deep(n: int) -> None:
    nested(n, lambda: deep(n))


def failure_of(converter, error: BaseException) -> Failure:
    out = Failure()
    converter.to_failure(error, DefaultPayloadConverter(), out)
    return out


def raised(depth: int) -> BaseException:
    try:
        raise_deep(depth)
    except ApplicationError as e:
        return e
    raise AssertionError("deep() did not raise")


def test_each_failure_in_the_chain_is_clipped_to_its_innermost_frames():
    error = raised(40)
    whole = failure_of(pydantic_data_converter.failure_converter, error)
    clipped = failure_of(BoundedFailureConverter(), error)
    assert whole.ByteSize() > 4096 > clipped.ByteSize()
    assert clipped.message == MESSAGE
    for kept, full in ((clipped, whole), (clipped.cause, whole.cause)):
        assert len(kept.stack_trace) < MAX_TRACE + 100
        assert kept.stack_trace.startswith("[... ") and "outer frames cut" in kept.stack_trace
        assert full.stack_trace.endswith(kept.stack_trace.split("\n", 1)[1])  # innermost
    assert "raise ApplicationError(MESSAGE" in clipped.stack_trace
    assert clipped.cause.message.startswith("Connection closed")
    assert clipped_message("y" * 5000).endswith("[... 4000 more characters]")
    small = failure_of(BoundedFailureConverter(), raised(0))
    assert small.stack_trace == failure_of(pydantic_data_converter.failure_converter,
                                           raised(0)).stack_trace


def test_with_a_codec_the_clipped_text_is_encoded():
    conv = with_codec(data_converter(None), codec_from_env({ENV_KEYS: f"k1:{new_key()}"}))
    failure = failure_of(conv.failure_converter, raised(40))
    assert failure.message == "Encoded failure" and failure.stack_trace == ""
    back = conv.failure_converter.from_failure(failure, DefaultPayloadConverter())
    assert isinstance(back, ApplicationError) and back.message == MESSAGE
    cause = back.__cause__
    assert isinstance(cause, ApplicationError) and cause.message.startswith("Connection closed")


@activity.defn(name="fails_once_deep")
async def fails_once_deep() -> str:
    if activity.info().attempt == 1:
        raise_deep(40)
    return "ok"


@workflow.defn(name="FailsOnceDeep", sandboxed=False)
class FailsOnceDeep:
    @workflow.run
    async def run(self) -> str:
        return await workflow.execute_activity(
            fails_once_deep, start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=100)))


async def last_failure(client: Client) -> str:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    async with Worker(client, task_queue=queue, workflows=[FailsOnceDeep],
                      activities=[fails_once_deep], workflow_runner=UnsandboxedWorkflowRunner()):
        handle = await client.start_workflow(FailsOnceDeep.run, id=f"deep-{uuid.uuid4().hex[:8]}",
                                             task_queue=queue)
        assert await handle.result() == "ok"
    started = [e.activity_task_started_event_attributes
               for e in (await handle.fetch_history()).events
               if e.HasField("activity_task_started_event_attributes")]
    assert started[-1].attempt == 2
    return started[-1].last_failure.message


async def test_the_next_attempt_sees_the_message_not_the_size_limit(client):
    assert await last_failure(client) == MESSAGE
    default = Client(client.service_client, namespace=client.namespace,
                     data_converter=pydantic_data_converter)
    assert await last_failure(default) == "Failure exceeds size limit."  # the control
