"""What the completion service remembers of a job (carried across continue-as-new), and the
pure bookkeeping on it: the model's declared deliverables, the files a follow-up turn wrote,
tool calls whose outcome is unknown."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from switchback.workflows.contract import ToolCallInfo, ToolOutcome, layout
from switchback.workflows.contract.job import JobResult

UNKNOWN_OUTCOME = "unknown_outcome"  # a tool outcome's code (activities/tools/delivery.py)
MAX_TURN_WRITTEN = 500
MAX_WROTE = 200


@dataclass(frozen=True)
class DeliverablesChecked:
    declared: list[str]  # paths or globs ([]: none declared)
    delivered: list[str]  # the files found: present, not empty, written by this job
    problems: list[str]  # what is wrong, a sentence each ([]: all there)


class CompletionState(BaseModel):
    """Carried across continue-as-new."""

    by_model: list[str] = []  # deliverables the model named when it planned (todo_write)
    refusals: int = 0  # job_complete calls refused (completion.max_refusals)
    checks: int = 0  # verification model calls made (completion.check model)
    # tool calls whose effect is unknown (an at-most-once call an earlier attempt started
    # and did not finish: activities/tools/delivery.py), "<tool> (<call id>)": the result's
    # notes list them
    unknown_outcomes: list[str] = []
    turn: int = 1  # the job's turn (follow-up instructions)
    # a follow-up turn's files: what its tool calls wrote (turn 2 on; the newest at most
    # MAX_TURN_WRITTEN): a job_complete of that turn names only these
    turn_written: list[str] = []
    # a job_complete of this turn was refused because a call of the same answer failed:
    # refused so once per turn
    unseen_refused: bool = False
    wrote: list[str] = []  # the files the job's tool calls wrote (the newest MAX_WROTE)

    def record_outcome(self, call: ToolCallInfo, outcome: ToolOutcome) -> None:
        """A tool call that ran: the files it wrote (a follow-up turn's own); a todo_write's
        deliverables join the model's; a call whose outcome is unknown is remembered for the
        result's notes."""
        if outcome.code == UNKNOWN_OUTCOME:
            self.unknown_outcomes = (self.unknown_outcomes + [f"{call.name} ({call.id})"])[-50:]
            return
        self.written(outcome.changed)
        if outcome.ok and outcome.changed:
            self.wrote = list(dict.fromkeys(self.wrote + outcome.changed))[-MAX_WROTE:]
        if call.name != "todo_write" or not outcome.ok or not call.args:
            return
        good, _ = valid(call.args.get("deliverables"))  # the memory files are no deliverable
        good = [p for p in good if p not in layout.MEMORY_FILES]
        self.by_model = list(dict.fromkeys(self.by_model + good))[:layout.MAX_DELIVERABLES]

    def written(self, paths: list[str]) -> None:
        """Files the job wrote: in a follow-up turn, the turn's own (the newest
        MAX_TURN_WRITTEN)."""
        if self.turn > 1 and paths:
            self.turn_written = list(dict.fromkeys(self.turn_written + paths))[
                -MAX_TURN_WRITTEN:]

    def new_turn(self, turn: int) -> None:
        """A follow-up turn begins: its job_complete is refused afresh and names its own
        files; the plan of a turn before names none of this turn's."""
        self.turn, self.turn_written, self.refusals, self.unseen_refused = turn, [], 0, False
        self.by_model = []

    def restored(self) -> None:
        """A restore put files back: this turn's writes count again only once made again."""
        self.turn_written = []

    def not_this_turns(self, claimed: list[str], delivered: list[str] | None = None
                       ) -> list[str]:
        """In a follow-up turn, the paths or globs of `claimed` that match no file this turn
        wrote (among `delivered`, the files found there, when given: a deleted one does not
        count). [] in turn 1."""
        if self.turn < 2:
            return []
        written = [w for w in self.turn_written if delivered is None or w in delivered]
        return [p for p in claimed if not any(fnmatch.fnmatchcase(w, p) for w in written)]

    def stale_problems(self, stale: list[str]) -> list[str]:
        return [f"{p} was not written in this turn (turn {self.turn}): name in `deliverables` "
                "only files this turn wrote" for p in stale]

    def this_turns(self, result: JobResult) -> JobResult:
        """A follow-up turn's result lists as its deliverables only the files the turn wrote
        (a strategy's own list, e.g. plan_revise_execute's steps, spans the turns before)."""
        claimed, _ = valid(result.deliverables)
        stale = set(self.not_this_turns(claimed))
        if not stale:
            return result
        return result.model_copy(update={"deliverables": [
            p for p in result.deliverables if p not in stale]})


def valid(paths: Any) -> tuple[list[str], list[str]]:
    """(the paths among a model's `paths` that can be deliverables, why the others cannot)."""
    if not isinstance(paths, list):
        return [], []
    good, bad = [], []
    for p in paths[:layout.MAX_DELIVERABLES]:
        path = str(p).strip().removeprefix("./")
        problem = layout.deliverable_problem(path)
        if problem:
            bad.append(f"{problem}: not a deliverable")
        elif path not in good:
            good.append(path)
    return good, bad
