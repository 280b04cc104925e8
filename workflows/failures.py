"""How a job fails: one typed, non-retryable error, and the one-line cause of an activity error.

A collaborator of the orchestrator that cannot go on raises `StepFailed`; the
orchestrator writes `output/error.json` and fails the job with `job_failed(...)`, an
`ApplicationError` of type `SwitchbackJobFailed` that names what failed.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    TimeoutError,
    TimeoutType,
)

from workflows.contract import JOB_FAILED_ERROR
from workflows.contract.config import TaskQueues


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
