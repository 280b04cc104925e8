"""`AgentJob`: the orchestrator. Deterministic code only; reads top to bottom.

    start:  check the input (raw JSON; a bad one fails the job at once, naming the field)
            -> the job's context: load config -> create workspace (claims the job's prefix)
            -> list tools -> the config's strategy begins
    loop:   step boundary: publish, wait while paused, apply `rewind` signals,
                           at a phase start maybe continue as new, snapshot the workspace
            CallModel    -> call_model activity -> strategy.after_model -> breakers
            ExecuteTools -> each call: refused by a guard | waits for `approve`
                           | the strategy's own tool | run_tool activity -> strategy.after_tools
            Complete     -> the completion service's end (verified) -> the job's result, or,
            ReportError     when an instruction is queued or arrives in time (`instruct`,
                            follow_up.wait_seconds), the next turn (strategy.follow_up);
                            an error the end does not complete: output/error.json, fail
    cancel: the strategy archives its todos as cancelled, output/completion.json
            "cancelled", the job ends Cancelled (while a completed turn waits for its next
            instruction: the wait ends, and the job with that turn's result)

The strategy (workflows/strategies/) decides, awaiting only its port (WorkspaceOps); this
loop carries its decisions out, with collaborators that each take what they need as arguments:

    JobContext               config, workspace ops, breakers: built once (job_context.py)
    model_steps.call_model   one model call over the conversation (workflows/conversation.py)
    tool_steps.run_tool      one tool call
    WorkspaceOps             the strategies' port: what they await (a nested job's child jobs:
                             child_jobs.py)
    Steering                 pause, rewinds, approvals (what the signals and the update set)
    breaker_steps            the deterministic checks after every model step
    PhaseStarts              continue-as-new and snapshots at phase starts (continuation.py)
    visibility               the `state` query, current details, search attributes, memo
    LiveEvents               the live event stream: what happens, as it happens (live.py)
    restores                 a rewind that puts the workspace back as it was at a phase start
    guards                   every refusal the model reads, named, in one pipeline (guards.py)
    Completion               the verified end: entered at a claim (a guard of job_complete)
                             and at an end (workflows/completion/)

Steering (workflows/handlers.py): signals `rewind(issue)`, `instruct`, `pause`, `resume`;
updates `approve`, `instruct`; query `state`.
"""

from __future__ import annotations

from typing import NoReturn

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.contrib.workflow_streams import WorkflowStream
from temporalio.exceptions import is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from switchback.workflows import (
        breaker_steps,
        continuation,
        guards,
        job_context,
        model_steps,
        restores,
        tool_listing,
        tool_steps,
        visibility,
    )
    from switchback.workflows.carry import Carried, JobRun, PhaseStart, carried, job_run, take_over
    from switchback.workflows.completion import UPGRADABLE
    from switchback.workflows.continuation import PhaseStarts
    from switchback.workflows.contract import (
        NO_INPUT,
        WORKFLOW_TYPE,
        InputError,
        JobResult,
        ModelReply,
        ToolOutcome,
    )
    from switchback.workflows.conversation import Conversation
    from switchback.workflows.failures import StepFailed, job_failed, unexpected
    from switchback.workflows.guards import PlannedCall
    from switchback.workflows.handlers import JobHandlers
    from switchback.workflows.job_context import JobContext
    from switchback.workflows.live import LiveEvents, carried_state
    from switchback.workflows.metrics import log_extra, phase_started
    from switchback.workflows.steering import Steering
    from switchback.workflows.strategies.base import (
        CallModel,
        Complete,
        ExecuteTools,
        NextStep,
        ReportError,
        Strategy,
    )

@workflow.defn(name=WORKFLOW_TYPE)
class AgentJob(JobHandlers):
    @workflow.init
    def __init__(self, job: RawValue = NO_INPUT) -> None:
        # the live event stream (workflows/live.py), with the events a continued run carried
        carried = carried_state(job)
        self.live = LiveEvents(WorkflowStream(carried), carried)
        # the job: set when it starts (or continues as new)
        self.job: JobContext | None = None  # config, workspace ops, breakers: built once
        self.strategy: Strategy | None = None
        # what the loop tracks between steps
        self.conversation = Conversation()  # the current conversation, by reference
        self.notes: list[str] = []  # breaker messages for the next model call
        self.steering = Steering()  # pause, rewinds, approvals
        self.progress = visibility.Progress()  # status, last steps, errors: what people follow
        self.publisher = visibility.Publisher()
        self.starts = PhaseStarts()  # continue-as-new and snapshots at phase starts
        self._ended = False  # the job's result is decided: no further instruction is taken

    # -- the loop -------------------------------------------------------------------

    @workflow.run
    async def run(self, job: RawValue = NO_INPUT) -> JobResult:
        """`job`: the payload undecoded, decoded and checked here (one the converter cannot
        decode would have the SDK retry the workflow task forever, not fail the job)."""
        try:
            result = await self._run(job)
        except BaseException as e:
            if isinstance(e, GeneratorExit):  # evicted from the cache: nothing to await
                raise
            if not isinstance(e, workflow.ContinueAsNewError):  # (that run carries them)
                self._end_turns("the job was cancelled" if is_cancelled_exception(e)
                                else "the job failed")
                await self._live_end("cancelled" if is_cancelled_exception(e) else "failed",
                                     self.progress.last_error or "")
            if not is_cancelled_exception(e) or self.strategy is None:
                raise
            self.progress.status = "cancelled"
            try:
                await self.strategy.interrupt(
                    "cancel", "cancelled by a Temporal cancel request")
            except StepFailed as failed:  # its archive could not be written
                raise job_failed(failed.what, failed.code) from e
            self._publish()
            raise
        self._end_turns(f"the job ended {result.status}")
        self.progress.status = result.status
        self._publish()
        await self._live_end(result.status, result.summary)
        return result

    async def _run(self, raw: RawValue) -> JobResult:
        try:
            job = job_run(raw, workflow.info().workflow_id)
        except InputError as e:
            self._refuse(str(e), "invalid_input")
        try:
            step = await (self._resume(job.carry) if job.carry else self._start(job))
            while True:
                step = await self._boundary(step, job)
                if isinstance(step, CallModel):
                    reply = await self._call_model(step)
                    step = await self._strategy().after_model(reply)
                    step = await self._check_breakers(reply, step)
                    if not isinstance(step, ExecuteTools):
                        self._record_step()
                elif isinstance(step, ExecuteTools):
                    outcomes = [await self._execute(p) for p in step.calls]
                    self._record_step()
                    step = await self._strategy().after_tools(outcomes)
                else:  # Complete | ReportError: the completion service decides the end
                    result = await self._end(step)
                    nxt = await self._next_turn(result)
                    if nxt is None:
                        return result
                    step = nxt
        except StepFailed as e:
            await self._fail(e.what, e.code)
        except Exception as e:  # a bug must fail the job, not retry the workflow task forever
            failed = unexpected(e)
            if failed is None:
                raise
            await self._fail(failed.what, failed.code)

    async def _start(self, job: JobRun) -> NextStep:
        """Build the job's context (job_context.py: the config, the workspace, the tools),
        then the strategy begins. A refusal before the job has a workspace of its own fails
        it at once and writes nothing."""
        try:
            ctx, instructions = await job_context.start(job, self.steering)
        except job_context.Refused as e:
            self._refuse(e.what, e.code)
        self._opened(ctx)
        self.progress.objective = visibility.objective_of(instructions)
        await ctx.list_tools()
        strategy = self.strategy = ctx.kind(ctx.cfg, ctx.ops)
        self.progress.status = "running"
        return await strategy.begin()

    async def _resume(self, carry: Carried) -> NextStep:
        """A continued run: restore the compact state, re-enter the phase about to start."""
        try:
            ctx = job_context.resume(carry, self.steering)
        except job_context.Refused as e:
            self._refuse(e.what, e.code)
        take_over(carry, self.steering, self.progress, self.conversation)
        self._opened(ctx)
        strategy = self.strategy = ctx.kind(ctx.cfg, ctx.ops)
        self.progress.status = "running"
        return await strategy.resume(carry.strategy)

    def _opened(self, ctx: JobContext) -> None:
        self.job = ctx
        self.live.retain = ctx.cfg.live_retain
        ctx.ops.on_usage = self._add_usage  # a verification call's tokens (completion.check)

    def _add_usage(self, tokens_in: int, tokens_out: int) -> None:
        if self.strategy is not None:
            self.strategy.add_usage(tokens_in, tokens_out)

    async def _boundary(self, step: NextStep, job: JobRun) -> NextStep:
        """Between steps: publish, honour pause, apply rewinds, maybe continue as new."""
        self._publish()
        self.live.observe(self._view().phase)
        if self.steering.paused:
            self.progress.status = "paused"
            self._publish()
            await workflow.wait_condition(lambda: not self.steering.paused)
            self.progress.status = "running"
        if self.steering.rewinds and not isinstance(step, Complete | ReportError):
            issue, restore = self.steering.take_rewinds()
            ctx = self._ctx()
            issue = await restores.rewind_issue(issue, restore, self._phase_number(), ctx.cfg,
                                                ctx.ws, self.progress, self._restored)
            step = await self._strategy().interrupt("rewind", issue)
            self._on_new_phase()
            self._publish()
        if isinstance(step, CallModel) and step.conversation != self.conversation.key:
            ctx = self._ctx()
            if self.starts.continue_now(ctx.cfg):  # only ever at the start of a phase
                await self._continue_as_new(job)
            phase_started(self._view().phase)
            await self.starts.snapshot(ctx.ops, self._view().phase, PhaseStart(
                objective=self.progress.objective, strategy=self._strategy().snapshot(),
                breakers=ctx.breakers.state, turn=self.steering.turn,
                completion=self._completion().state.model_copy()), ctx.cfg)
        return step

    async def _next_turn(self, result: JobResult) -> NextStep | None:
        """Follow-up instructions: after a completed turn, the next one when an instruction
        is queued or arrives within follow_up.wait_seconds (status waiting_for_instructions
        meanwhile; steering.py); None: the job ends with `result`. The instruction joins
        instructions.md (every later prompt has it) and the strategy starts its next turn."""
        ctx = self._ctx()
        text = await self.steering.next_turn(result.status, ctx.cfg.config.follow_up,
                                             self._waiting)
        if text is None:
            return None  # (run() ends the turns right after: nothing awaits in between)
        self.progress.status, turn = "running", self.steering.turn
        self.live.emit("turn", turn=turn, instruction=text[:2000])
        await ctx.ops.append_instruction(turn, text)
        self._completion().next_turn(turn)
        await tool_listing.add_for_turn(ctx.cfg, ctx.ws, turn, self.steering)
        step = await self._strategy().follow_up(text, turn)
        self._on_new_phase()
        return step

    def _waiting(self, until: str) -> None:
        """A completed turn waits for its next instruction `until` ("": no longer)."""
        self.progress.waiting_until = until
        if until:
            self.progress.status = "waiting_for_instructions"
            self._publish()

    def _restored(self) -> None:
        """The workspace was put back to a phase's start: what this turn wrote may be gone."""
        self._completion().restored()

    async def _continue_as_new(self, job: JobRun) -> None:
        ctx = self._ctx()
        await continuation.continue_as_new(job, carried(
            ctx.cfg, self._strategy().snapshot(), ctx.breakers.state, self.steering,
            self.progress, self.conversation, self._completion().state,
            self.live.carry()), self._view().phase)

    # -- a model step -----------------------------------------------------------------

    async def _call_model(self, step: CallModel) -> ModelReply:
        ctx = self._ctx()
        if step.conversation != self.conversation.key:
            self._on_new_phase()
        notes, self.notes = self.notes, []
        self._completion().new_answer()
        turn = await self.starts.after(model_steps.call_model(  # then a phase start's snapshot
            self.conversation, step, notes, ctx.cfg, ctx.ws, self._phase_number(),
            visibility.model_label(step.label, self._view()), self._model_start))
        self.live.model_end(turn.call, turn.reply)
        if turn.summary_usage.prompt_tokens or turn.summary_usage.completion_tokens:
            self._strategy().add_usage(turn.summary_usage.prompt_tokens,
                                       turn.summary_usage.completion_tokens)
        calls = ", ".join(f"{c.name} {c.summary}".strip() for c in turn.reply.tool_calls)
        self.progress.last_step = f"{step.label}: {calls or 'no tool call'}"
        return turn.reply

    async def _check_breakers(self, reply: ModelReply, step: NextStep) -> NextStep:
        """Deterministic checks after the step (workflows/breaker_steps.py)."""
        ctx = self._ctx()
        for trip in await breaker_steps.observe(ctx.breakers, self._view(), reply, ctx.cfg,
                                                ctx.ops):
            self.live.breaker(trip)
            if trip.action == "note":
                self.notes.append(trip.message)
                continue
            if trip.action == "stop":
                self.progress.status = breaker_steps.stop_status(trip)
                return await self._strategy().interrupt(
                    "finish", trip.message, self.progress.status)
            step = await self._strategy().interrupt(trip.action, trip.message)
            self._on_new_phase()
            return step
        return step

    def _on_new_phase(self) -> None:
        self._ctx().breakers.reset_window()
        self.notes = []

    # -- a tool call -----------------------------------------------------------------

    async def _execute(self, planned: PlannedCall) -> ToolOutcome:
        """One call: its guards (workflows/guards.py), an approval, its own tool or run_tool."""
        ctx, call, strategy = self._ctx(), planned.call, self._strategy()
        self.live.tool_call(call)
        ran = False  # (a strategy's own tool ran; a guard's or a denial's outcome did not)
        outcome = await self._guarded(planned)
        if outcome is None and (call.name in ctx.cfg.config.approval_required
                                or call.needs_approval):
            self.live.approval(call)
            verdict = await self.steering.wait_for_approval(
                call, ctx.cfg.config.approvals, self._phase_number(), self._set_status)
            self.live.approval(call, verdict)
            if not verdict.startswith("approved"):
                outcome = ToolOutcome(ok=False, code="approval_denied",
                                      summary=f"Error [approval_denied]: {verdict}")
        if outcome is None and strategy.owns_tool(call.name):
            call = await restores.rewind_call(call, self._phase_number(), ctx.cfg, ctx.ws,
                                              self.progress, self._restored)
            outcome = await strategy.own_tool(call)
            ran = True
        if outcome is None:
            with tool_steps.cancel_kept():  # a cancel during the tool ends the job once recorded
                outcome = await tool_steps.run_tool(self.conversation, call, call.needs_approval,
                                                    ctx.cfg, ctx.ws)
                self._completion().ran(call, outcome)
                self.live.tool_outcome(call, outcome, refused=False)
            return outcome
        self.conversation.add("tool", outcome.summary, call.id)
        self.live.tool_outcome(call, outcome, refused=not ran)
        return outcome

    async def _guarded(self, planned: PlannedCall) -> ToolOutcome | None:
        """The refusal of the guards that run with the call, or None: a call refused when the
        turn was planned, one after a call that ended the phase (`skipped`), a job_complete's
        claim (the completion service)."""
        if self._strategy().batch_closed():
            return guards.refusal("skipped", "not run: an earlier call in this turn ended "
                                  "the phase.")
        if planned.refusal is not None:
            return planned.outcome()
        if planned.call.name == "job_complete" and (
                refused := await self._completion().claim(planned.call)):
            return guards.refusal(*refused)
        return None

    async def _end(self, step: Complete | ReportError) -> JobResult:
        """The strategy's end, through the completion service: the verified result. An error
        the model caused (it stopped calling tools, the phases ran out) ends the job `stuck`;
        any other fails it."""
        if isinstance(step, ReportError):
            if step.code not in UPGRADABLE:
                await self._fail(step.what, step.code)
            result = JobResult(status="stuck", summary=step.what,
                               **self._view().totals.model_dump())
        else:
            result = step.result
        return await self._completion().end(result, first_turn=self.steering.turn == 1)

    # -- ending ------------------------------------------------------------------------

    def _end_turns(self, why: str) -> None:
        """The job's result is decided: no instruction is taken any more, and those queued
        are listed in `rejected` as not taken."""
        self._ended = True
        self.steering.end_turns(why)

    async def _fail(self, what: str, code: str) -> NoReturn:
        self._end_turns("the job failed")
        ph = self._view().phase
        workflow.logger.error("job failed: %s", what, extra=log_extra(ph))
        self.progress.status, self.progress.last_error = "failed", what
        if self.job is not None:  # S3 down: the job still fails, typed, and says so
            what = await self.job.ops.record_failure(what, code, ph.number if ph else None)
        self._publish()
        raise job_failed(what, code)

    def _refuse(self, what: str, code: str) -> NoReturn:
        """Fail the job before it has a workspace: the typed error, the reason in `state`."""
        self._end_turns("the job was refused")
        self.progress.status, self.progress.last_error = "failed", what
        workflow.logger.error("job refused: %s", what)
        self._publish()  # the reason persists on the page (memo)
        raise job_failed(what, code)
