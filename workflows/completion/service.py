"""The completion service: how every job ends, under every strategy (docs/completion.md).

The orchestrator enters it at two points, and tells it what happened in between:

    claim(call)       a job_complete is about to run: None lets it through, or the refusal
                      the model reads (a guard of the guard pipeline, workflows/guards.py):
                      `claim_unseen` - in the same answer as a call that failed, once a
                      turn; `job_incomplete` - deliverables missing, at most
                      completion.max_refusals times, then let through (and held at the end)
    end(result)       the strategy completes, or stops `stuck` (a breaker, the phases or the
                      nudges ran out): the job's result, verified
    ran / new_answer / children_ran / next_turn / restored      the bookkeeping

The result's rules:
- `completed` only with every deliverable there: declared by the job (config, input), named
  by the model when it planned (todo_write) or in job_complete; else `stuck` with the list.
- a claim with confidence 0 is the model saying the task is not achieved: `stuck`.
- the workflow completes a job on its own (a breaker stopped it, the model stopped calling
  tools, the phases ran out) only against the deliverables the job itself declared: a list
  the model wrote is checked when the model claims completion, never used to end a job
  `completed` in its place. A job that declared nothing and whose model never claimed
  completion ends `stuck`, with the files it wrote in its notes.

It imports no strategy: a strategy reaches it through its port (`Port.deliverables`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from switchback.workflows.completion import verdicts
from switchback.workflows.completion.state import CompletionState, DeliverablesChecked, valid
from switchback.workflows.contract import (
    CHECK_COMPLETION,
    CHECK_FILES,
    VERIFY_COMPLETION,
    CheckCompletionRequest,
    CheckCompletionResult,
    CheckFilesRequest,
    CheckFilesResult,
    JobResult,
    ToolCallInfo,
    ToolOutcome,
    VerifyCompletionRequest,
    layout,
)

if TYPE_CHECKING:
    from switchback.workflows.strategies.base import ChildOutcome
    from switchback.workflows.workspace_ops import WorkspaceOps

# the model's way of not finishing (ReportError codes): the job ends `stuck`, not failed, and
# with the deliverables it declared there, completed by the workflow
UPGRADABLE = frozenset({"no_tool_call", "phase_limit"})


class Completion:
    def __init__(self, ops: WorkspaceOps, state: CompletionState | None = None) -> None:
        self.ops = ops
        self.state = state or CompletionState()
        # the claim of a job_complete that passed its check in this answer (`end` takes it
        # instead of checking again)
        self.passed: tuple[list[str], DeliverablesChecked] | None = None
        # the claim of a job_complete let through unchecked (its refusals used up): `end`
        # holds it to the whole check, this turn's files included
        self.let_through: list[str] | None = None
        self.failed: list[str] = []  # the current answer's calls that failed, "<tool>: <error>"

    # -- bookkeeping -------------------------------------------------------------------

    def new_answer(self) -> None:
        """A model answer begins: what the last one claimed is checked afresh."""
        self.passed = self.let_through = None
        self.failed = []

    def ran(self, call: ToolCallInfo, outcome: ToolOutcome) -> None:
        """A tool call of the current answer ran (an activity; not a refusal)."""
        self.state.record_outcome(call, outcome)
        if not outcome.ok:
            self.failed.append(f"{call.name} failed: {outcome.summary[:300]}")

    def children_ran(self, outcomes: list[ChildOutcome]) -> None:
        """A nested job's children: in a follow-up turn, their files are this turn's work."""
        self.state.written([f"{o.folder}/{d}" for o in outcomes for d in o.deliverables])

    def next_turn(self, turn: int) -> None:
        self.state.new_turn(turn)

    def restored(self) -> None:
        self.state.restored()

    def declared(self) -> list[str]:
        """The deliverables the job is held to: its own (config, input), else the model's."""
        return self.by_job() or list(self.state.by_model)

    def by_job(self) -> list[str]:
        return list(self.ops.cfg.config.deliverables)

    # -- the two entry points ----------------------------------------------------------

    async def claim(self, call: ToolCallInfo) -> tuple[str, str] | None:
        """A job_complete about to run: None lets it through; else (guard, message)."""
        state, cfg = self.state, self.ops.cfg
        if self.failed and not state.unseen_refused:
            state.unseen_refused = True
            return "claim_unseen", verdicts.unseen_message(self.failed)
        claimed, bad = valid((call.args or {}).get("deliverables"))
        if state.refusals >= cfg.config.completion.max_refusals:
            self.let_through = claimed  # `end` ends the job stuck if still not there
            return None
        stale = state.not_this_turns(claimed)
        if stale:  # refused before any check (a completion.check command or model call)
            found = DeliverablesChecked(claimed, [], bad + state.stale_problems(stale))
        else:
            found = self._this_turns(await self.deliverables(claimed, bad), claimed)
        if not found.problems:
            self.passed = (claimed, found)
            return None
        state.refusals += 1
        return "job_incomplete", verdicts.missing_message(found, state.refusals, cfg,
                                                          state.turn)

    async def end(self, result: JobResult, first_turn: bool = True) -> JobResult:
        """The job's end: a completion verified; a `stuck` one completed by the workflow when
        the deliverables the job declared are all there (the first turn only: a follow-up
        turn's work is not shown by files that were there before it)."""
        if result.status == "completed":
            final = await self._claimed(result)
        elif result.status == "stuck":
            found = await self.deliverables()
            final = verdicts.by_workflow(result, found, result.summary) \
                if first_turn and self.by_job() and not found.problems \
                else verdicts.stopped(result, found, self.state.wrote)
        else:
            final = result
        final = verdicts.with_unknown(final, self.state.unknown_outcomes)
        if final != result:  # (the strategy wrote the result it ended with)
            await self.ops.write_output(layout.COMPLETION, final.model_dump())
        return final

    async def _claimed(self, result: JobResult) -> JobResult:
        """The model's completion (job_complete, or a strategy's answer): `completed` only
        with its deliverables there and a confidence above 0."""
        if verdicts.gave_up(result):
            return verdicts.not_achieved(result)
        model_said = valid(result.deliverables)[0] == self.let_through
        if not model_said:  # a strategy's own list keeps only this turn's files
            result = self.state.this_turns(result)
        claimed, bad = valid(result.deliverables)
        found = self.passed[1] if self.passed and self.passed[0] == claimed and not bad \
            else await self.deliverables(claimed, bad)
        if model_said:
            found = self._this_turns(found, claimed)
        return verdicts.verified(result, found) if not found.problems \
            else verdicts.unverified(result, found)

    def _this_turns(self, found: DeliverablesChecked, claimed: list[str]
                    ) -> DeliverablesChecked:
        """`found` with a problem for each claimed file this turn did not write."""
        stale = self.state.not_this_turns(claimed, found.delivered if not found.problems
                                          else None)
        return verdicts.with_problems(found, self.state.stale_problems(stale))

    # -- the check -------------------------------------------------------------------------

    async def deliverables(self, claimed: list[str] | None = None, bad: list[str] | None = None,
                           content: bool = True) -> DeliverablesChecked:
        """The deliverables the job is held to and `claimed`, checked; `bad`: problems already
        found with the claim. `content`: with every file there, run completion.check too."""
        ops, c = self.ops, self.ops.cfg.config
        paths = list(dict.fromkeys(self.declared() + (claimed or [])))
        if not paths:
            return verdicts.checked(paths, None, bad)
        result = await ops.activity(CHECK_FILES, CheckFilesRequest(
            workspace=ops.ws, phase=0, paths=[], deliverables=paths), CheckFilesResult,
            "check deliverables")
        found = verdicts.checked(paths, result, bad)
        check = c.completion.check
        if found.problems or check is None or not content:
            return found
        if check.command is not None and ops.cfg.folder is not None:
            verdict = await ops.activity(CHECK_COMPLETION, CheckCompletionRequest(
                workspace=ops.ws, folder=ops.cfg.folder, command=check.command,
                timeout_seconds=check.timeout_seconds), CheckCompletionResult,
                f"check {check.command}", timeout=check.timeout_seconds + 60)
            return verdicts.content_checked(found, check.command, verdict)
        self.state.checks += 1
        verdict = await ops.activity(VERIFY_COMPLETION, VerifyCompletionRequest(
            workspace=ops.ws, llm=c.llm, prompt=ops.cfg.prompts["verify"],
            paths=found.delivered, call_key=f"{ops.ws.job_id}:verify:{self.state.checks}"),
            CheckCompletionResult, "verify the deliverables", timeout=c.llm.timeout_seconds + 30,
            task_queue=c.task_queues.model)
        ops.on_usage(verdict.usage.prompt_tokens, verdict.usage.completion_tokens)
        return verdicts.content_checked(found, "a verification call", verdict)
