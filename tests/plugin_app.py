"""A user's own Temporal application beside switchback (tests/test_plugin_composes.py): its
codec, its failure converter, its workflows and activities, in a workflow module that imports
switchback.plugin as a worker module of the usual layout does. One of its workflows starts
an AgentJob as a child."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure
from temporalio.converter import DefaultFailureConverter, PayloadCodec, PayloadConverter
from temporalio.exceptions import ApplicationError

from switchback.plugin import SwitchbackPlugin  # noqa: F401 - the sandbox must take this import
from switchback.workflows.contract import JobInput, JobResult

SEALED = b"binary/my-app-sealed"
SOURCE = "my-app"


class SealCodec(PayloadCodec):
    """The user's "encryption": the payload serialized and reversed, under its own encoding."""

    async def encode(self, payloads):
        return [Payload(metadata={"encoding": SEALED}, data=p.SerializeToString()[::-1])
                for p in payloads]

    async def decode(self, payloads):
        out = []
        for p in payloads:
            if p.metadata.get("encoding") != SEALED:
                out.append(p)
                continue
            inner = Payload()
            inner.ParseFromString(p.data[::-1])
            out.append(inner)
        return out


class TaggingFailureConverter(DefaultFailureConverter):
    """The user's failure converter: every failure it makes says where it came from."""

    def to_failure(self, exception: BaseException, payload_converter: PayloadConverter,
                   failure: Failure) -> None:
        super().to_failure(exception, payload_converter, failure)
        failure.source = SOURCE


@activity.defn
async def shout(text: str) -> str:
    return text.upper()


@activity.defn
async def switchback_context() -> dict:
    """What switchback's activity interceptors left in this activity's context: nothing, in
    the user's own activity."""
    from switchback.activities import attempts
    from switchback.telemetry.logs import ACTIVITY_CONTEXT

    return {"log_context": ACTIVITY_CONTEXT.get(), "deadline": attempts._deadline.get()}


@workflow.defn
class Shout:
    @workflow.run
    async def run(self, text: str) -> str:
        return await workflow.execute_activity(shout, text,
                                               start_to_close_timeout=timedelta(seconds=10))


@workflow.defn
class Probe:
    @workflow.run
    async def run(self) -> dict:
        return await workflow.execute_activity(switchback_context,
                                               start_to_close_timeout=timedelta(seconds=10))


@workflow.defn
class Refuse:
    @workflow.run
    async def run(self, reason: str) -> None:
        raise ApplicationError(reason, type="Refused", non_retryable=True)


@workflow.defn
class Delegate:
    """Hands the work to an AgentJob (the child's id: `<this id>-job`), returns its status."""

    @workflow.run
    async def run(self, instructions: str) -> str:
        result = await workflow.execute_child_workflow(
            "AgentJob", JobInput(config={"strategy": "react"}, instructions=instructions),
            id=f"{workflow.info().workflow_id}-job", result_type=JobResult)
        return result.status


WORKFLOWS: list[type] = [Shout, Probe, Refuse, Delegate]
ACTIVITIES: list[Callable] = [shout, switchback_context]
