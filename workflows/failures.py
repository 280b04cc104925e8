"""How a job fails: one typed, non-retryable error, and the one-line cause of an activity error.

A collaborator of the orchestrator that cannot go on raises `StepFailed`; the
orchestrator writes `output/error.json` and fails the job with `job_failed(...)`, an
`ApplicationError` of type `SwitchbackJobFailed` that names what failed.
"""

from __future__ import annotations

from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

from workflows.contract import JOB_FAILED_ERROR


class StepFailed(Exception):
    """A step of the job failed for good (retries exhausted, a non-retryable error)."""

    def __init__(self, what: str, code: str) -> None:
        super().__init__(what)
        self.what, self.code = what, code


def job_failed(what: str, code: str) -> ApplicationError:
    return ApplicationError(what, {"code": code}, type=JOB_FAILED_ERROR, non_retryable=True)


def cause_of(e: BaseException) -> str:
    """The message of the error the activity (or child job) raised, in one line."""
    while isinstance(e, ActivityError | ChildWorkflowError) and e.__cause__ is not None:
        e = e.__cause__
    return " ".join(str(e).split())[:500]
