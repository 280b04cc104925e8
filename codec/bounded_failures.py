"""Failures small enough that Temporal keeps them: the failure converter switchback uses.

When an activity attempt fails and will be retried, the server keeps its failure for the
next attempt (the web UI's "last failure", `ActivityTaskStarted.last_failure`). A failure
over `limit.mutableStateActivityFailureSize.error` (4 KB on the dev server) is replaced by
the bare text "Failure exceeds size limit.", and the message that said what went wrong is
gone. A Python failure carries its stack trace and its cause's, and a worker's interceptors
alone are a dozen frames: an MCP server's "Connection closed" went over 4 KB when the
project lived under a longer path.

So each failure in the chain keeps at most `MAX_MESSAGE` characters of message and the
innermost `MAX_TRACE` characters of stack trace (whole lines, after a line that says how
much was cut). The worker's log keeps the whole trace: the SDK logs every failed attempt
with it.
"""

from __future__ import annotations

from temporalio.api.failure.v1 import Failure
from temporalio.converter import DefaultFailureConverter, PayloadConverter

MAX_MESSAGE = 1000
MAX_TRACE = 1000


def clipped_message(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    cut = len(message) - MAX_MESSAGE
    return f"{message[:MAX_MESSAGE]} [... {cut} more characters]"


def clipped_trace(trace: str) -> str:
    """The innermost whole lines of `trace` that fit in MAX_TRACE characters."""
    if len(trace) <= MAX_TRACE:
        return trace
    kept = trace[-MAX_TRACE:]
    kept = kept[kept.find("\n") + 1:] if "\n" in kept else kept
    cut = len(trace) - len(kept)
    return f"[... {cut} characters of outer frames cut; the worker's log has them]\n{kept}"


class BoundedFailureConverter(DefaultFailureConverter):
    """DefaultFailureConverter, with each message and stack trace clipped (see module)."""

    def __init__(self, *, encode_common_attributes: bool = False) -> None:
        super().__init__(encode_common_attributes=False)  # encoded here, after clipping
        self._encode = encode_common_attributes

    def to_failure(self, exception: BaseException, payload_converter: PayloadConverter,
                   failure: Failure) -> None:
        # the base class fills this level and calls back here for the cause
        super().to_failure(exception, payload_converter, failure)
        failure.message = clipped_message(failure.message)
        failure.stack_trace = clipped_trace(failure.stack_trace)
        if self._encode:  # as DefaultFailureConverter does it, on the clipped text
            failure.encoded_attributes.CopyFrom(payload_converter.to_payloads(
                [{"message": failure.message, "stack_trace": failure.stack_trace}])[0])
            failure.message = "Encoded failure"
            failure.stack_trace = ""


class BoundedFailureConverterWithEncodedAttributes(BoundedFailureConverter):
    """The same, with message and trace in an encoded payload (the codec encrypts them)."""

    def __init__(self) -> None:
        super().__init__(encode_common_attributes=True)
