"""The completion service's verdicts as data: what a refused claim tells the model, and the
job's result as verified (`completed` with the deliverables there, `stuck` with what is
missing, completed by the workflow against the deliverables the job declared)."""

from __future__ import annotations

import dataclasses

from switchback.workflows.completion.state import DeliverablesChecked
from switchback.workflows.contract import (
    CheckCompletionResult,
    CheckFilesResult,
    JobResult,
    ResolvedConfig,
)

BY_WORKFLOW = "Completed by the workflow"  # how the summary of a job it completed starts
SHOWN = 20  # problems listed in a refusal or a result
GAVE_UP = ("the model reported the task not achieved (job_complete with confidence 0): "
           "{summary}")


def checked(paths: list[str], result: CheckFilesResult | None,
            bad: list[str] | None = None) -> DeliverablesChecked:
    if result is None:
        return DeliverablesChecked(declared=paths, delivered=[], problems=bad or [])
    return DeliverablesChecked(declared=paths, delivered=result.delivered, problems=list(
        dict.fromkeys((bad or []) + result.undelivered)))


def content_checked(found: DeliverablesChecked, command: str,
                    verdict: CheckCompletionResult) -> DeliverablesChecked:
    """`found` (every deliverable there) with completion.check's verdict: a failed check is
    a problem the model is told, in the script's words."""
    if verdict.ok:
        return found
    said = verdict.output or "no output"
    return dataclasses.replace(found, problems=[f"the check ({command}) failed: {said}"])


def with_problems(found: DeliverablesChecked, more: list[str]) -> DeliverablesChecked:
    return found if not more else dataclasses.replace(found, problems=found.problems + more)


def listed(problems: list[str]) -> str:
    return "; ".join(problems[:SHOWN]) + ("; ..." if len(problems) > SHOWN else "")


def missing_message(found: DeliverablesChecked, refusals: int, cfg: ResolvedConfig,
                    turn: int = 1) -> str:
    """What the model reads when its job_complete is refused for missing deliverables. A job
    that has no write_file and declares no deliverable is told that its deliverables can only
    be files its tools wrote."""
    whose = "the job" if turn < 2 else f"this turn (turn {turn})"
    then = ("You have no tool that writes workspace files, so a deliverable can only be a "
            "file your tools wrote: when the task's work is done with the tools, call "
            "job_complete again with no deliverables." if cfg.config.acts_only() else
            "Do the work that makes them so with the tools. Then call job_complete again "
            f"(name in `deliverables` the files {whose} wrote).")
    return (f"job_complete refused ({refusals} of {cfg.config.completion.max_refusals}): the "
            f"deliverables are not there: {listed(found.problems)}. {then}")


def unseen_message(failed: list[str]) -> str:
    """A job_complete made in the same answer as calls that failed: the claim came before the
    model could read those results."""
    return (f"job_complete not taken: in the same answer, {'; '.join(failed[:3])}. The "
            "completion came before those results were read: read them, make the "
            "deliverables right if they change anything, then call job_complete again.")


def with_unknown(result: JobResult, unknown: list[str]) -> JobResult:
    """`result` with the tool calls whose effect is unknown in its notes."""
    if not unknown:
        return result
    note = ("Tool calls whose outcome is unknown (started, not finished, not run again: "
            f"check whether they took effect): {', '.join(unknown)}")
    return result.model_copy(update={"notes": f"{result.notes}\n{note}".strip()})


def gave_up(result: JobResult) -> bool:
    """A claim whose confidence is 0: the model says the task is not achieved."""
    return result.confidence is not None and result.confidence <= 0


def unverified(result: JobResult, found: DeliverablesChecked,
               lead: str = "the deliverables are not there") -> JobResult:
    """A completion whose deliverables are not all there (or that the model said failed,
    `lead` says which): `stuck`, with what is missing."""
    note = f"Not completed: {lead}: {listed(found.problems)}"
    return result.model_copy(update={
        "status": "stuck", "missing": found.problems[:SHOWN], "verified": found.delivered,
        "completed_by": "", "answer_only": False, "notes": f"{result.notes}\n{note}".strip()})


def not_achieved(result: JobResult) -> JobResult:
    """A claim with confidence 0, as the `stuck` end it is."""
    why = GAVE_UP.format(summary=" ".join(result.summary.split())[:300] or "(no summary)")
    return unverified(result, DeliverablesChecked([], [], [why]), "the task is not achieved")


def stopped(result: JobResult, found: DeliverablesChecked, wrote: list[str]) -> JobResult:
    """A job stopped `stuck` and not completed by the workflow: what is missing, and the
    files it wrote (the newest 30)."""
    files = [p for p in wrote if p not in found.delivered][-30:]
    note = f"Files the job wrote: {', '.join(found.delivered + files)}." \
        if found.delivered or files else "The job wrote no file."
    return result.model_copy(update={
        "missing": found.problems[:SHOWN], "verified": found.delivered,
        "notes": f"{result.notes}\n{note}".strip()})


def verified(result: JobResult, found: DeliverablesChecked) -> JobResult:
    return result.model_copy(update={
        "verified": found.delivered, "missing": [], "answer_only": not found.declared,
        "completed_by": result.completed_by or "model",
        "deliverables": result.deliverables or found.delivered})


def by_workflow(result: JobResult, found: DeliverablesChecked, why: str) -> JobResult:
    """A job that would have ended `why` (stuck, failed), the deliverables it declared all
    there."""
    return result.model_copy(update={
        "status": "completed", "completed_by": "workflow", "verified": found.delivered,
        "missing": [], "deliverables": found.delivered,
        "summary": f"{BY_WORKFLOW}: every deliverable the job declared is there "
                   f"({', '.join(found.delivered)[:500]}); the job had stopped: {why[:500]}",
        "notes": f"{result.notes}\nThe model had not completed the job itself.".strip()})
