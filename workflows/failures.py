"""How a job fails: one typed, non-retryable error, whatever failed.

A collaborator of the orchestrator that cannot go on raises `StepFailed`; the
orchestrator writes `output/error.json` and fails the job with `job_failed(...)`, an
`ApplicationError` of type `SwitchbackJobFailed` that names what failed. The paths:

    an activity that failed for good (retries exhausted, non-retryable)   StepFailed
    a local activity (tools.local, the workspace operations of phase
    transitions) - the SDK raises the activity's own error, not an
    ActivityError                                                          StepFailed
    an exception in workflow code the loop did not expect (a bug)          `unexpected`:
        internal_error, instead of a workflow task retried forever

What is never caught: cancellation, continue-as-new (BaseExceptions), the job's own
typed failure, and the SDK's errors about the workflow itself (nondeterminism,
read-only context: `TemporalError`s that are not `FailureError`s) - those must reach
the SDK.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    FailureError,
    TemporalError,
    TimeoutError,
    TimeoutType,
    is_cancelled_exception,
)

from switchback.workflows.contract import JOB_FAILED_ERROR
from switchback.workflows.contract.config import TaskQueues


class StepFailed(Exception):
    """A step of the job failed for good (retries exhausted, a non-retryable error)."""

    def __init__(self, what: str, code: str) -> None:
        super().__init__(what)
        self.what, self.code = what, code


def job_failed(what: str, code: str) -> ApplicationError:
    return ApplicationError(what, {"code": code}, type=JOB_FAILED_ERROR, non_retryable=True)


def cause_of(e: BaseException, queue: str | None = None) -> str:
    """The message of the error the activity (or child job) raised, in one line (`queue`:
    the task queue it was sent to, named when no worker took it)."""
    while isinstance(e, ActivityError | ChildWorkflowError) and e.__cause__ is not None:
        e = e.__cause__
    if isinstance(e, TimeoutError) and e.type == TimeoutType.SCHEDULE_TO_START:
        return (f"no worker took it from task queue {queue or 'of the job'!r} within "
                "task_queues.schedule_to_start_seconds: does a worker poll that queue?")
    return " ".join(str(e).split())[:500]


def queue_wait(queues: TaskQueues, queue: str | None) -> timedelta | None:
    """The schedule-to-start timeout of an activity sent to `queue` (a separate queue only:
    the backstop when no worker polls it)."""
    seconds = queues.start_timeout(queue)
    return timedelta(seconds=seconds) if seconds else None


def is_activity_failure(e: BaseException) -> bool:
    """An activity or local activity that failed for good (not a cancellation)."""
    return isinstance(e, FailureError) and not is_cancelled_exception(e)


def unexpected(e: Exception) -> StepFailed | None:
    """What to fail the job with for an exception the loop did not expect, or None when it
    must go on to the SDK (cancellation, the typed failure, the SDK's own errors)."""
    if is_cancelled_exception(e):
        return None
    if isinstance(e, ApplicationError) and e.type == JOB_FAILED_ERROR:
        return None
    if isinstance(e, TemporalError) and not isinstance(e, FailureError):
        return None  # nondeterminism, read-only context, not in the workflow's event loop
    if isinstance(e, FailureError):
        return StepFailed(f"an activity failed: {cause_of(e)}", "activity_failed")
    where = ""
    tb = e.__traceback__
    while tb is not None:
        where = f" at {tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}"
        tb = tb.tb_next
    return StepFailed(f"internal error in the workflow ({type(e).__name__}{where}): "
                      f"{' '.join(str(e).split())[:300]}", "internal_error")
