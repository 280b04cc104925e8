"""`AgentJob`: the orchestrator. Deterministic code only; reads top to bottom.

    start:  check the input (raw JSON; a bad one fails the job at once, naming the field)
            -> load config -> create workspace (claims the job's prefix) -> list tools
            -> the config's strategy begins
    loop:   step boundary: publish, wait while paused, apply `rewind` signals,
                           at a phase start maybe continue as new, snapshot the workspace
            CallModel    -> call_model activity -> strategy.after_model -> breakers
            ExecuteTools -> each call: skipped | refused | waits for `approve`
                           | the strategy's own tool | run_tool activity -> strategy.after_tools
            Complete     -> verified (the deliverables there) -> the job's result, or,
                            when an instruction is queued or arrives in time (`instruct`,
                            follow_up.wait_seconds), the next turn (strategy.follow_up)
            ReportError  -> output/error.json, fail (or completed, deliverables all there)
    cancel: the strategy archives its todos as cancelled, output/completion.json
            "cancelled", the job ends Cancelled (while a completed turn waits for its next
            instruction: the wait ends, and the job with that turn's result)

The strategy (workflows/strategies/) decides, awaiting only its port (WorkspaceOps); this
loop carries its decisions out, with collaborators that each take what they need as arguments:

    model_steps.call_model   one model call over the conversation (workflows/conversation.py)
    tool_steps.run_tool      one tool call
    WorkspaceOps             the strategies' port: what they await (a nested job's child jobs:
                             child_jobs.py)
    Steering                 pause, rewinds, approvals (what the signals and the update set)
    breaker_steps            the deterministic checks after every model step
    PhaseStarts              continue-as-new and snapshots at phase starts (continuation.py)
    visibility               the `state` query, current details, search attributes, memo
    restores                 a rewind that puts the workspace back as it was at a phase start
    Verifier                 the verified end: job_complete refused while deliverables are
                             missing, `completed` only with them there (verification.py)

Steering: signals `rewind(issue)`, `instruct`, `pause`, `resume`; updates `approve`,
`instruct`; query `state`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from workflows import (
        breaker_steps,
        completion,
        continuation,
        job_start,
        model_steps,
        restores,
        tool_listing,
        tool_steps,
        visibility,
    )
    from workflows.breakers import Breakers
    from workflows.carry import Carried, JobRun, PhaseStart, carried, job_run, take_over
    from workflows.continuation import PhaseStarts
    from workflows.contract import (
        INSTRUCT,
        NO_INPUT,
        WORKFLOW_TYPE,
        InputError,
        JobResult,
        JobState,
        ModelReply,
        ResolvedConfig,
        ToolOutcome,
        WorkspaceRef,
    )
    from workflows.conversation import Conversation
    from workflows.failures import StepFailed, cause_of, job_failed, unexpected
    from workflows.metrics import log_extra, phase_started
    from workflows.steering import Steering
    from workflows.strategies import strategy_class
    from workflows.strategies.base import (
        CallModel,
        Complete,
        ExecuteTools,
        NextStep,
        PlannedCall,
        ReportError,
        Strategy,
        StrategyView,
        Totals,
    )
    from workflows.verification import Verifier
    from workflows.workspace_ops import WorkspaceOps

@workflow.defn(name=WORKFLOW_TYPE)
class AgentJob:
    def __init__(self) -> None:
        # the job: set when it starts (or continues as new)
        self.cfg: ResolvedConfig | None = None
        self.ops: WorkspaceOps | None = None
        self.strategy: Strategy | None = None
        self.breakers: Breakers | None = None
        # what the loop tracks between steps
        self.conversation = Conversation()  # the current conversation, by reference
        self.notes: list[str] = []  # breaker messages for the next model call
        self.steering = Steering()  # pause, rewinds, approvals
        self.progress = visibility.Progress()  # status, last steps, errors: what people follow
        self.publisher = visibility.Publisher()
        self.starts = PhaseStarts()  # continue-as-new and snapshots at phase starts
        self.verifier: Verifier | None = None  # the verified end (workflows/verification.py)
        self._ended = False  # the job's result is decided: no further instruction is taken

    # -- steering ---------------------------------------------------------------------

    @workflow.signal(dynamic=True, description='rewind (choose "Custom", name it rewind): '
                     're-plan around an issue at the next step: "issue" or {"issue": "...", '
                     '"restore_phase": N} (files back to phase N); instruct (Custom, name it '
                     'instruct): the next instruction, "markdown", a follow-up turn')
    def signal(self, name: str, args: Sequence[RawValue]) -> None:
        """`rewind` (the panic button for a person: takes effect at the next step boundary;
        an issue string or {"issue": ..., "restore_phase": N}) and any signal of an unknown
        name. Its payloads arrive undecoded, so none - of any type, count or encoding - can
        fail the workflow task or be dropped without a trace: what does not fit is in
        `state.rejected`."""
        ph = self._view().phase
        self.steering.on_signal(name, args, ph.number if ph else 0, self._max_turns(),
                                self._ended)

    # `*args`: any count of inputs reaches the handler (a fixed signature would fail the
    # workflow task on an input); one given is refused in `state.rejected`, not acted on
    @workflow.signal(name="pause", description="Pause at the next step boundary (no input)")
    def pause(self, *args: object) -> None:
        self.steering.set_paused(True, args)

    @workflow.signal(name="resume", description="Resume a paused job (no input)")
    def resume(self, *args: object) -> None:
        self.steering.set_paused(False, args)

    @workflow.update(name="approve", description='Answer a tool call waiting for approval: '
                     '{"call_id": "call_3", "approved": true, "note": "ok"}')
    def approve(self, req: RawValue = NO_INPUT) -> str:
        return self.steering.decide(req)

    @approve.validator
    def _validate_approve(self, req: RawValue = NO_INPUT) -> None:
        self.steering.check_approval(req)  # rejected: an ApplicationError saying why

    @workflow.update(name=INSTRUCT, description='The next instruction, a follow-up turn: '
                     '"markdown" or {"instruction": "..."}; taken when the current turn '
                     'completes')
    def instruct(self, req: RawValue = NO_INPUT) -> str:
        return self.steering.queue_instruction(self._check_instruction(req))

    @instruct.validator
    def _validate_instruct(self, req: RawValue = NO_INPUT) -> None:
        self._check_instruction(req)  # rejected: an ApplicationError saying why

    def _check_instruction(self, req: RawValue) -> tuple[str, list[str]]:
        return self.steering.check_instruction(req, self._max_turns(), self._ended)

    def _max_turns(self) -> int | None:
        """follow_up.max_turns (None before the config is loaded: a run's first task)."""
        return self.cfg.config.follow_up.max_turns if self.cfg else None

    @workflow.query(name="state", description="The live state: phase, todos, tokens, cost, ...")
    def state(self) -> JobState:
        ws = self.ws
        return visibility.job_state(workflow.info().workflow_id, self.progress, self.steering,
                                    self._view(), self.cfg, self.breakers,
                                    self.ops.completion if self.ops else None,
                                    f"s3://{ws.bucket}/{ws.job_id}/" if ws else "")

    # -- the loop -------------------------------------------------------------------

    @workflow.run
    async def run(self, job: RawValue = NO_INPUT) -> JobResult:
        """`job`: the payload undecoded, decoded and checked here (a payload the converter
        cannot decode would make the SDK retry the workflow task forever instead of failing
        the job)."""
        try:
            result = await self._run(job)
        except BaseException as e:
            if not isinstance(e, workflow.ContinueAsNewError):  # (that run carries them)
                self._end_turns("the job was cancelled" if is_cancelled_exception(e)
                                else "the job failed")
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
        await workflow.wait_condition(workflow.all_handlers_finished)
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
                elif isinstance(step, Complete):
                    result = await self._verifier().finish(
                        step.result, upgrade=self.steering.turn == 1)
                    nxt = await self._next_turn(result)
                    if nxt is None:
                        return await self._verifier().ending(result)
                    step = nxt
                elif self.steering.turn == 1 and step.code in completion.UPGRADABLE and (
                        done := await self._verifier().completed_anyway(
                            self._view().totals, step.what)):
                    nxt = await self._next_turn(done)
                    if nxt is None:
                        return done
                    step = nxt
                else:
                    await self._fail(step.what, step.code)
        except StepFailed as e:
            await self._fail(e.what, e.code)
        except Exception as e:  # a bug must fail the job, not retry the workflow task forever
            failed = unexpected(e)
            if failed is None:
                raise
            await self._fail(failed.what, failed.code)

    async def _start(self, job: JobRun) -> NextStep:
        """Load the config, create the workspace. A refusal here (a bad config, a job id
        already used, a document from outside the allowed roots) fails the job at once
        and writes nothing into a workspace that may not be this job's."""
        try:  # local activities at the start (job_start.py)
            cfg = self.cfg = await job_start.load_config(job.config)
        except Exception as e:
            if not job_start.failed(e):  # cancelled, or not an activity's failure
                raise
            self._refuse(cause_of(e), "invalid_config")
        cfg = self.cfg = job_start.with_deliverables(cfg, job.deliverables)
        self._strategy_class(cfg)  # a bad name refuses the job before it has a workspace
        instructions = job.instructions or cfg.instructions
        if not instructions:
            self._refuse(f"config '{cfg.name}' has no instructions.md and the job input gives "
                         "no 'instructions'", "invalid_input")
        self.progress.objective = visibility.objective_of(instructions)
        self._open_workspace(cfg)
        try:
            await self._workspace_ops().create(
                instructions, job.documents if job.documents is not None else cfg.documents)
        except (ActivityError, StepFailed) as e:
            refused = e.__cause__ if isinstance(e, StepFailed) and e.__cause__ else e
            if is_cancelled_exception(refused):
                raise
            self.ops = None  # not this job's workspace (yet): no output/error.json there
            self._refuse(cause_of(refused), "workspace_refused")
        try:  # tool names -> the names the model calls, schemas recorded
            cfg = self.cfg = await tool_listing.resolve(cfg, self._workspace_ops().ws)
        except StepFailed as e:
            await self._fail(e.what, e.code)
        kind = self._strategy_class(cfg)
        self._open_workspace(cfg)
        completion.begin(cfg, self._workspace_ops().completion, instructions, workflow.patched)
        strategy = self.strategy = kind(cfg, self._workspace_ops())
        self.progress.status = "running"
        return await strategy.begin()

    async def _resume(self, carry: Carried) -> NextStep:
        """A continued run: restore the compact state, re-enter the phase about to start."""
        self.cfg = carry.cfg
        kind = self._strategy_class(carry.cfg, carry)
        take_over(carry, self.steering, self.progress, self.conversation)
        self._open_workspace(carry.cfg)
        self._workspace_ops().completion = carry.completion
        strategy = self.strategy = kind(carry.cfg, self._workspace_ops())
        self.progress.status = "running"
        return await strategy.resume(carry.strategy)

    def _strategy_class(self, cfg: ResolvedConfig, carry: Carried | None = None
                        ) -> type[Strategy]:
        """The config's strategy (an unknown name refuses the job), and the job's breakers.
        The strategy is made over the job's workspace ops, its port."""
        c = cfg.config
        try:
            kind = strategy_class(c.strategy)
        except KeyError as e:
            self._refuse(f"config '{cfg.name}': {e.args[0]}", "invalid_config")
        self.breakers = Breakers(c.breakers, c.budget, c.limits.max_steps_per_phase,
                                 carry.breakers if carry else None)
        return kind

    def _open_workspace(self, cfg: ResolvedConfig) -> None:
        try:  # the job's prefix, or its folder in its parent's workspace (nested)
            self.ops = WorkspaceOps.of_job(cfg, self.steering)
        except InputError as e:
            self._refuse(str(e), "invalid_config")
        self.ops.on_usage = self._add_usage  # a verification call's tokens (completion.check)
        self.verifier = Verifier(self.ops, workflow.patched)

    def _add_usage(self, tokens_in: int, tokens_out: int) -> None:
        if self.strategy is not None:
            self.strategy.add_usage(tokens_in, tokens_out)

    async def _boundary(self, step: NextStep, job: JobRun) -> NextStep:
        """Between steps: publish, honour pause, apply rewinds, maybe continue as new."""
        self._publish()
        if self.steering.paused:
            self.progress.status = "paused"
            self._publish()
            await workflow.wait_condition(lambda: not self.steering.paused)
            self.progress.status = "running"
        if self.steering.rewinds and not isinstance(step, Complete | ReportError):
            issue, restore = self.steering.take_rewinds()
            issue = await restores.rewind_issue(issue, restore, self._phase_number(),
                                                *self._job(), self.progress, self._restored)
            step = await self._strategy().interrupt("rewind", issue)
            self._on_new_phase()
            self._publish()
        if isinstance(step, CallModel) and step.conversation != self.conversation.key:
            if self.starts.continue_now(self.cfg):  # only ever at the start of a phase
                await self._continue_as_new(job)
            phase_started(self._view().phase)
            assert self.cfg and self.breakers
            await self.starts.snapshot(self._workspace_ops(), self._view().phase, PhaseStart(
                objective=self.progress.objective, strategy=self._strategy().snapshot(),
                breakers=self.breakers.state, turn=self.steering.turn,
                completion=self._workspace_ops().completion.model_copy()), self.cfg)
        return step

    async def _next_turn(self, result: JobResult) -> NextStep | None:
        """Follow-up instructions: after a completed turn, the next one when an instruction
        is queued or arrives within follow_up.wait_seconds (status waiting_for_instructions
        meanwhile; steering.py); None: the job ends with `result`. The instruction joins
        instructions.md (every later prompt has it) and the strategy starts its next turn."""
        assert self.cfg
        text = await self.steering.next_turn(result.status, self.cfg.config.follow_up,
                                             self._waiting)
        if text is None:
            return None  # (run() ends the turns right after: nothing awaits in between)
        self.progress.status, turn = "running", self.steering.turn
        await self._workspace_ops().append_instruction(turn, text)
        completion.new_turn(self.cfg, self._workspace_ops().completion, turn, text)
        assert self.ws
        await tool_listing.add_for_turn(self.cfg, self.ws, turn, self.steering)
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
        completion.restored(self._workspace_ops().completion)

    async def _continue_as_new(self, job: JobRun) -> None:
        assert self.cfg and self.breakers
        await continuation.continue_as_new(job, carried(
            self.cfg, self._strategy().snapshot(), self.breakers.state, self.steering,
            self.progress, self.conversation, self._workspace_ops().completion),
            self._view().phase)

    # -- a model step -----------------------------------------------------------------

    async def _call_model(self, step: CallModel) -> ModelReply:
        assert self.cfg and self.ws
        if step.conversation != self.conversation.key:
            self._on_new_phase()
        notes, self.notes = self.notes, []
        self._verifier().new_turn()
        turn = await self.starts.after(model_steps.call_model(  # then a phase start's snapshot
            self.conversation, step, notes, self.cfg, self.ws, self._phase_number(),
            visibility.model_label(step.label, self._view())))
        if turn.summary_usage.prompt_tokens or turn.summary_usage.completion_tokens:
            self._strategy().add_usage(turn.summary_usage.prompt_tokens,
                                       turn.summary_usage.completion_tokens)
        calls = ", ".join(f"{c.name} {c.summary}".strip() for c in turn.reply.tool_calls)
        self.progress.last_step = f"{step.label}: {calls or 'no tool call'}"
        return turn.reply

    async def _check_breakers(self, reply: ModelReply, step: NextStep) -> NextStep:
        """Deterministic checks after the step (workflows/breaker_steps.py)."""
        assert self.cfg and self.breakers
        for trip in await breaker_steps.observe(self.breakers, self._view(), reply, self.cfg,
                                                self._workspace_ops()):
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
        assert self.breakers
        self.breakers.reset_window()
        self.notes = []

    # -- a tool call -----------------------------------------------------------------

    async def _execute(self, planned: PlannedCall) -> ToolOutcome:
        assert self.cfg and self.ws
        call, strategy = planned.shown(), self._strategy()
        if strategy.batch_closed():
            outcome = ToolOutcome(ok=False, code="skipped", summary="Not run: an earlier call in "
                                  "this turn ended the phase.")
        elif planned.refusal is not None:
            outcome = ToolOutcome(ok=False, code=planned.refusal_code,
                                  summary=f"Error [{planned.refusal_code}]: {planned.refusal}")
        elif call.name == "job_complete" and (blind := self._verifier().blind()):
            outcome = blind
        elif (call.name in self.cfg.config.approval_required or call.needs_approval) and not (
                verdict := await self.steering.wait_for_approval(
                    call, self.cfg.config.approvals, self._phase_number(), self._set_status)
                ).startswith("approved"):
            outcome = ToolOutcome(ok=False, code="approval_denied",
                                  summary=f"Error [approval_denied]: {verdict}")
        elif call.name == "job_complete" and (refused := await self._verifier().refuse(call)):
            outcome = refused
        elif strategy.owns_tool(call.name):
            call = await restores.rewind_call(call, self._phase_number(), *self._job(),
                                              self.progress, self._restored)
            outcome = await strategy.own_tool(call)
        else:
            outcome = await tool_steps.run_tool(self.conversation, call, call.needs_approval,
                                                self.cfg, self.ws, planned.path)
            completion.record_outcome(self._workspace_ops().completion, call, outcome)
            self._verifier().ran(call, outcome)
            return outcome
        self.conversation.add("tool", outcome.summary, call.id)
        return outcome

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
        if self.ops is not None:  # S3 down: the job still fails, typed, and says so
            what = await self.ops.record_failure(what, code, ph.number if ph else None)
        self._publish()
        raise job_failed(what, code)

    def _refuse(self, what: str, code: str) -> NoReturn:
        """Fail the job before it has a workspace: the typed error, the reason in `state`."""
        self._end_turns("the job was refused")
        self.progress.status, self.progress.last_error = "failed", what
        workflow.logger.error("job refused: %s", what)
        self._publish()  # the reason persists on the page (memo)
        raise job_failed(what, code)

    # -- what people see ---------------------------------------------------------------

    def _view(self) -> StrategyView:
        return self.strategy.view() if self.strategy else StrategyView(
            strategy="", phase=None, totals=Totals(), history=[], progress=0)

    def _record_step(self) -> None:
        visibility.record_step(self.progress, self._view())

    def _set_status(self, status: str) -> None:
        self.progress.status = status
        self._publish()

    def _publish(self) -> None:
        cfg = self.cfg
        self.publisher.publish(self.state(), cfg is not None and cfg.config.search_attributes,
                               text=cfg is None or not cfg.payloads_encrypted)

    def _phase_number(self) -> int:
        ph = self._view().phase
        return ph.number if ph else 0

    @property
    def ws(self) -> WorkspaceRef | None:
        """The job's workspace as its requests name it (with the latest snapshot taken)."""
        return self.ops.ws if self.ops is not None else None

    def _job(self) -> tuple[ResolvedConfig, WorkspaceRef]:
        assert self.cfg and self.ws
        return self.cfg, self.ws

    def _strategy(self) -> Strategy:
        assert self.strategy is not None, "the job has no strategy yet"
        return self.strategy

    def _verifier(self) -> Verifier:
        assert self.verifier is not None, "the job has no workspace yet"
        return self.verifier

    def _workspace_ops(self) -> WorkspaceOps:
        assert self.ops is not None, "the job has no workspace yet"
        return self.ops

