"""The orchestrator's verified end: the decisions of workflows/completion.py carried out
over the job's workspace ops, at the points where a job may end.

    job_complete called        `refuse`: refused with what is missing, while refusals
                               are left (the model goes on), else let through; refused
                               once per turn when a call of the same answer failed
    the strategy completes     `finish`: `completed` only with the deliverables there,
                               else `stuck` with the list; a `stuck` end whose declared
                               deliverables are all there is completed by the workflow
    the job ends               `ending`: with the small profile, a last turn completed with
                               no work done, in a job with tools of the task, is `stuck`
    a model's failure          `completed_anyway`: no tool calls or phases run out, with
                               every declared deliverable there: completed by the workflow
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workflows import completion
from workflows.contract import JobResult, ToolCallInfo, ToolOutcome, layout
from workflows.strategies.base import DeliverablesChecked, Totals

if TYPE_CHECKING:
    from workflows.workspace_ops import WorkspaceOps


# a job_complete beside a failed call of the same answer is refused (once per turn)
CLAIM_UNSEEN = "claim-beside-a-failure"
# small profile: a job whose last turn completed answer-only with no work done, in a job
# with tools of the task, ends `stuck` (completion.empty_handed)
CLAIM_NEEDS_WORK = "claim-needs-work"


class Verifier:
    def __init__(self, ops: WorkspaceOps, patched: Callable[[str], bool]) -> None:
        self.ops = ops
        self.patched = patched  # workflow.patched: a job started before a change replays
        # the claim of a job_complete that passed its check in this turn (the job ends in
        # this turn: `finish` takes it instead of checking again)
        self.passed: tuple[list[str], DeliverablesChecked] | None = None
        # the claim of a job_complete let through unchecked (its refusals used up): `finish`
        # holds it to the whole check, this turn's files included
        self.let_through: list[str] | None = None
        # the calls of the model's current answer that failed, "<tool>: <error>"
        self.failed: list[str] = []

    def new_turn(self) -> None:
        self.passed = self.let_through = None
        self.failed = []

    def ran(self, call: ToolCallInfo, outcome: ToolOutcome) -> None:
        """A tool call of the current answer ran (the workflow's own refusals of a call, for
        the protocol's sake, are no failure of the work)."""
        if not outcome.ok:
            self.failed.append(f"{call.name} failed: {outcome.summary[:300]}")

    def blind(self) -> ToolOutcome | None:
        """A job_complete in the same answer as a tool call that failed: refused once per
        turn (the model claimed before it read the failure); None: not such a claim."""
        state = self.ops.completion
        if self.failed and not state.unseen_refused and self.patched(CLAIM_UNSEEN):
            state.unseen_refused = True
            return completion.unseen_failures(self.failed)
        return None

    async def refuse(self, call: ToolCallInfo) -> ToolOutcome | None:
        """A job_complete whose deliverables are not there, refused (the model reads why),
        while refusals are left; None: the strategy takes it."""
        ops, cfg = self.ops, self.ops.cfg
        claimed, bad = completion.valid((call.args or {}).get("deliverables"))
        if ops.completion.refusals >= cfg.config.completion.max_refusals:
            self.let_through = claimed  # `finish` ends the job stuck if still not there
            return None
        stale = completion.not_this_turns(claimed, ops.completion)
        if stale:  # refused before any check (a completion.check command or model call)
            found = DeliverablesChecked(claimed, [], bad + completion.stale_problems(
                stale, ops.completion))
        else:
            found = completion.written_this_turn(
                await ops.deliverables(claimed, bad, claim=True), claimed, ops.completion)
        if not found.problems:
            self.passed = (claimed, found)
            return None
        ops.completion.refusals += 1
        return completion.refusal(found, ops.completion.refusals, cfg, ops.completion.turn)

    async def finish(self, result: JobResult, upgrade: bool = True) -> JobResult:
        """The strategy's end, verified: `completed` only with the deliverables there; a
        job stopped `stuck` whose declared deliverables are all there is completed (only
        with `upgrade`: not in a follow-up turn, whose work the files of the turns before
        do not show)."""
        ops = self.ops
        if result.status == "completed":
            model_said = completion.valid(result.deliverables)[0] == self.let_through
            if not model_said:  # a strategy's own list keeps only this turn's files
                result = completion.this_turns(result, ops.completion)
            claimed, bad = completion.valid(result.deliverables)
            found = self.passed[1] if self.passed and self.passed[0] == claimed and not bad \
                else await ops.deliverables(claimed, bad)
            if model_said:
                found = completion.written_this_turn(found, claimed, ops.completion)
            final = (completion.verified(result, found) if not found.problems
                     else completion.unverified(result, found))
        elif result.status == "stuck":
            found = await ops.deliverables()
            final = (completion.by_workflow(result, found, result.summary)
                     if upgrade and found.declared and not found.problems
                     else result.model_copy(update={"missing": found.problems[:20]}))
        else:
            final = result
        final = completion.with_unknown(final, ops.completion)
        if final != result:
            await ops.write_output(layout.COMPLETION, final.model_dump())
        return final

    async def ending(self, result: JobResult) -> JobResult:
        """The job ends with `result`, its last turn's. With the small profile, a turn that
        completed answer-only with no work done, in a job with tools of the task, does not
        end it `completed`: `stuck`, with why (completion.empty_handed). A turn before the
        last may have asked the user something, which the next instruction answers."""
        ops = self.ops
        if result.status != "completed" or not result.answer_only or not \
                completion.empty_handed(ops.cfg, ops.completion) or not \
                self.patched(CLAIM_NEEDS_WORK):
            return result
        final = completion.unverified(result, completion.no_work(ops.cfg, ops.completion),
                                      "the work is not done")
        await ops.write_output(layout.COMPLETION, final.model_dump())
        return final

    async def completed_anyway(self, totals: Totals, why: str) -> JobResult | None:
        """A job about to fail the model's way (no tool calls, phases run out) whose declared
        deliverables are all there: completed by the workflow, else None."""
        found = await self.ops.deliverables()
        if not found.declared or found.problems:
            return None
        final = completion.with_unknown(completion.by_workflow(
            JobResult(status="stuck", **totals.model_dump()), found, why), self.ops.completion)
        await self.ops.write_output(layout.COMPLETION, final.model_dump())
        return final
