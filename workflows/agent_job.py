"""`AgentJob`: the orchestrator loop. Deterministic code only.

    load config -> create workspace -> strategy.begin()
    loop:  step boundary: wait while paused; apply `rewind` signals
           CallModel    -> call_model activity -> strategy.after_model -> breakers
           ExecuteTools -> each call: refused | waits for `approve` | strategy's own tool
                           | run_tool activity -> strategy.after_tools
           Complete     -> return JobResult;  ReportError -> output/error.json, fail
    cancel: archive the todos as cancelled, output/completion.json "cancelled", end Cancelled
    at a phase start, when Temporal suggests it (or every `continue_as_new.every_phases`):
           continue as new, carrying compact state (workflows/carry.py)

Steering: signals `rewind(issue)`, `pause`, `resume`; update `approve`; query `state`.
The conversation is kept by reference: this loop tracks only its key and length and
hands the activities the few messages it made itself, so history per step stays small.
"""

from __future__ import annotations

import re
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from workflows.breakers import Breakers, StepFacts, Trip, cost_of
    from workflows.carry import SNAPSHOT_PHASE, Carried, JobRun, PhaseStart, SnapshotRequest
    from workflows.config_schema import ResolvedConfig
    from workflows.effects import WorkspaceEffects
    from workflows.live_state import (
        JobState,
        PendingApproval,
        StepLine,
        objective_of,
    )
    from workflows.metrics import approvals_waiting, count_trip, log_extra, phase_started
    from workflows.model_steps import ModelSteps, _cause
    from workflows.phase_alternation import PhaseAlternation
    from workflows.strategy import CallModel, Complete, ExecuteTools, PlannedCall, ReportError
    from workflows.types import (
        CREATE_WORKSPACE,
        JOB_FAILED_ERROR,
        LOAD_CONFIG,
        RUN_TOOL,
        ApproveRequest,
        CreateWorkspaceRequest,
        CreateWorkspaceResult,
        DocumentSpec,
        InlineMessage,
        JobInput,
        JobResult,
        LoadConfigRequest,
        ModelReply,
        ToolCallInfo,
        ToolLimits,
        ToolOutcome,
        ToolRequest,
        WorkspaceRef,
    )
    from workflows.visibility import Visibility


JOB_ID = re.compile(r"[A-Za-z0-9._-]{1,200}")
LOCAL_TOOL_CALLS = "local-tool-calls"  # patch: tools.local run as local activities
INLINE_TOOL_RESULTS = "inline-tool-results"  # patch: short results ride with the next call
INLINE_MAX_CHARS = 500


def _label(call: ToolCallInfo) -> str:
    return f"{call.name} {call.summary}".strip()[:200]


@workflow.defn(name="AgentJob")
class AgentJob(WorkspaceEffects, ModelSteps, Visibility):
    def __init__(self) -> None:
        self.cfg: ResolvedConfig | None = None
        self.ws: WorkspaceRef | None = None
        self.strategy: PhaseAlternation | None = None
        self.breakers: Breakers | None = None
        self.conversation = ""
        self.length = 0  # messages stored in the current conversation
        self.inline: list[InlineMessage] = []  # made here, stored with the next model call
        self.notes: list[str] = []  # breaker messages for the next model call
        self.last_assistant = -1
        self.status = "starting"
        self.objective = ""
        self.paused = False
        self.rewinds: list[str] = []
        self.approvals: dict[str, PendingApproval] = {}
        self.decisions: dict[str, ApproveRequest] = {}
        self.last_error: str | None = None
        self.last_step = ""
        self.recent: list[StepLine] = []
        self._published: tuple | None = None
        self.summary_upto = 0  # messages of the current conversation folded into its summary
        self.summaries = 0
        self.token_ratio = 1.0  # reported / estimated prompt tokens
        self.runs = 1
        self.phases_this_run = 0
        self.config_recorded = False

    # -- steering ---------------------------------------------------------------------

    @workflow.signal(name="rewind")
    def rewind(self, issue: str) -> None:
        """Panic button for a person: takes effect at the next step boundary."""
        self.rewinds.append(str(issue).strip() or "rewind requested by an operator")

    @workflow.signal(name="pause")
    def pause(self) -> None:
        self.paused = True

    @workflow.signal(name="resume")
    def resume(self) -> None:
        self.paused = False

    @workflow.update(name="approve")
    def approve(self, req: ApproveRequest) -> str:
        self.decisions[req.call_id] = req
        return f"{'approved' if req.approved else 'denied'} {self.approvals[req.call_id].tool} "\
               f"call {req.call_id}"

    @approve.validator
    def _validate_approve(self, req: ApproveRequest) -> None:
        if req.call_id not in self.approvals:
            waiting = ", ".join(self.approvals) or "none"
            raise ApplicationError(f"no tool call '{req.call_id}' is waiting for approval "
                                   f"(waiting: {waiting})")

    @workflow.query(name="state")
    def state(self) -> JobState:
        return self._state()

    # -- the loop -------------------------------------------------------------------

    @workflow.run
    async def run(self, job: JobRun) -> JobResult:
        try:
            result = await self._run(job)
        except BaseException as e:
            if not is_cancelled_exception(e) or self.strategy is None or self.ws is None:
                raise
            self.status = "cancelled"
            await self.strategy.interrupt("cancel", "cancelled by a Temporal cancel request")
            self._publish()
            raise
        self.status = result.status
        self._publish()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return result

    async def _run(self, job: JobRun) -> JobResult:
        job_id = workflow.info().workflow_id
        if not JOB_ID.fullmatch(job_id) or job_id.startswith("."):
            raise ApplicationError(
                f"job id {job_id!r} cannot name a workspace: use 1-200 letters, digits, '.', "
                "'_' or '-', not starting with '.' (the id is the job's S3 prefix)",
                type=JOB_FAILED_ERROR, non_retryable=True)
        step = await (self._resume(job.carry) if job.carry else self._start(job))
        while True:
            step = await self._boundary(step, job)
            if isinstance(step, CallModel):
                reply = await self._call_model(step)
                step = await self.strategy.after_model(reply)
                step = await self._check_breakers(reply, step)
                if not isinstance(step, ExecuteTools):
                    self._record_step()
            elif isinstance(step, ExecuteTools):
                outcomes = [await self._execute(p) for p in step.calls]
                self._record_step()
                step = await self.strategy.after_tools(outcomes)
            elif isinstance(step, Complete):
                return step.result
            else:
                await self._fail(step)

    async def _start(self, job: JobInput):
        self.cfg = await workflow.execute_activity(
            LOAD_CONFIG, LoadConfigRequest(config=job.config), result_type=ResolvedConfig,
            start_to_close_timeout=timedelta(seconds=30), summary="load config",
            retry_policy=RetryPolicy(maximum_attempts=5))
        c = self.cfg.config
        self.ws = WorkspaceRef(bucket=c.workspace.bucket, job_id=workflow.info().workflow_id)
        instructions = job.instructions or self.cfg.instructions
        if not instructions:
            raise ApplicationError(f"config '{self.cfg.name}' has no instructions.md and the job "
                                   "input gives no 'instructions'", type=JOB_FAILED_ERROR,
                                   non_retryable=True)
        self.objective = objective_of(instructions)
        docs = job.documents if job.documents is not None else self.cfg.documents
        await self._ws_activity(CREATE_WORKSPACE, CreateWorkspaceRequest(
            workspace=self.ws, instructions=instructions, max_file_bytes=c.limits.max_file_bytes,
            documents=[d if isinstance(d, DocumentSpec) else DocumentSpec(path=d) for d in docs]),
            CreateWorkspaceResult, "create workspace")
        self.strategy = PhaseAlternation(self.cfg, self)
        self.breakers = Breakers(c.breakers, c.budget, c.limits.max_steps_per_phase)
        self.status = "running"
        return await self.strategy.begin()

    async def _resume(self, carry: Carried):
        """A continued run: restore the compact state, re-enter the phase about to start."""
        self.cfg, self.objective, self.runs = carry.cfg, carry.objective, carry.runs
        c = self.cfg.config
        self.ws = WorkspaceRef(bucket=c.workspace.bucket, job_id=workflow.info().workflow_id)
        self.paused, self.rewinds = self.paused or carry.paused, carry.rewinds + self.rewinds
        self.recent, self.last_error = carry.recent, carry.last_error
        self.inline, self.conversation = carry.closing, carry.closing_conversation
        self.strategy = PhaseAlternation(self.cfg, self)
        self.breakers = Breakers(c.breakers, c.budget, c.limits.max_steps_per_phase,
                                 carry.breakers)
        self.status = "running"
        return await self.strategy.resume(carry.strategy)

    def _should_continue_as_new(self) -> bool:
        self.phases_this_run += 1
        if self.phases_this_run < 2:
            return False  # this run's first phase: never continue before doing one
        every = self.cfg.config.continue_as_new.every_phases if self.cfg else 0
        return (workflow.info().is_continue_as_new_suggested()
                or bool(every and self.phases_this_run > every))

    async def _continue_as_new(self, job: JobRun) -> None:
        assert self.cfg and self.strategy and self.breakers
        await workflow.wait_condition(workflow.all_handlers_finished)
        carry = Carried(cfg=self.cfg, objective=self.objective,
                        strategy=self.strategy.snapshot(), breakers=self.breakers.state,
                        paused=self.paused, rewinds=self.rewinds, recent=self.recent,
                        runs=self.runs + 1, last_error=self.last_error,
                        closing=self.inline, closing_conversation=self.conversation)
        workflow.logger.info("continuing as new at phase %s (run %s)",
                             self.strategy.phase.number if self.strategy.phase else "?",
                             self.runs + 1, extra=log_extra(self.strategy.phase))
        workflow.continue_as_new(JobRun(config=job.config, carry=carry))

    async def _boundary(self, step, job: JobRun):
        """Between steps: publish, honour pause, apply rewinds, maybe continue as new."""
        assert self.strategy
        self._publish()
        if self.paused:
            self.status = "paused"
            self._publish()
            await workflow.wait_condition(lambda: not self.paused)
            self.status = "running"
        if self.rewinds and not isinstance(step, Complete | ReportError):
            issue = "; ".join(self.rewinds)
            self.rewinds = []
            step = await self.strategy.interrupt("rewind", issue)
            self._on_new_phase()
            self._publish()
        if isinstance(step, CallModel) and step.conversation != self.conversation:
            if self._should_continue_as_new():  # only ever at the start of a phase
                await self._continue_as_new(job)
            phase_started(self.strategy.phase)
            await self._snapshot()
        return step

    async def _snapshot(self) -> None:
        """Record the workspace and the state at this phase start (for `starter.py rerun`)."""
        assert self.cfg and self.ws and self.strategy and self.breakers and self.strategy.phase
        n = self.strategy.phase.number
        req = SnapshotRequest(workspace=self.ws, phase=n, state=PhaseStart(
            objective=self.objective, strategy=self.strategy.snapshot(),
            breakers=self.breakers.state), config=None if self.config_recorded else self.cfg)
        await self._ws_activity(SNAPSHOT_PHASE, req, int, f"snapshot phase {n}")
        self.config_recorded = True

    async def _check_breakers(self, reply: ModelReply, step):
        assert self.strategy and self.breakers and self.cfg
        s, ph = self.strategy, self.strategy.phase
        assert ph is not None
        t = s.totals
        trips = self.breakers.observe(StepFacts(
            phase=ph.number, phase_steps=ph.steps, phase_variant=ph.variant,
            job_steps=t.steps, tool_digests=[c.digest for c in reply.tool_calls],
            tool_names=[c.name for c in reply.tool_calls], text=reply.content,
            progress=s.progress(), tokens=t.tokens_in + t.tokens_out,
            cost=cost_of(self.cfg.config.llm, t.tokens_in, t.tokens_out)))
        if ph.variant == "wrap_up" and ph.steps > self.cfg.config.budget.wrap_up_steps:
            trips.append(Trip(breaker="budget", action="stop", message=(
                f"the wrap-up phase used its {self.cfg.config.budget.wrap_up_steps} steps")))
        for trip in trips:
            count_trip(trip.breaker, trip.action)
            await self.write_output(f"output/breakers/trip_{self.breakers.state.trip_count:04d}"
                                    ".json", trip.model_dump())
        for trip in sorted(trips, key=lambda t: ["stop", "wrap_up", "rewind", "note"]
                           .index(t.action)):
            workflow.logger.warning("breaker %s: %s", trip.breaker, trip.message,
                                    extra=log_extra(ph))
            if trip.action == "note":
                self.notes.append(trip.message)
                continue
            status = "budget_exhausted" if trip.breaker in ("budget", "job_steps") else "stuck"
            if trip.action == "stop":
                self.status = status
                return await s.interrupt("finish", trip.message, status)
            step = await s.interrupt(trip.action, trip.message)  # rewind | wrap_up
            self._on_new_phase()
            return step
        return step

    def _on_new_phase(self) -> None:
        assert self.breakers
        self.breakers.reset_window()
        self.notes = []

    # -- model and tools ----------------------------------------------------------------

    async def _execute(self, planned: PlannedCall) -> ToolOutcome:
        assert self.cfg and self.ws and self.strategy
        call = planned.call
        if self.strategy.batch_closed():
            outcome = ToolOutcome(ok=False, code="skipped", summary="Not run: an earlier call in "
                                  "this turn ended the phase.")
        elif planned.refusal is not None:
            outcome = ToolOutcome(ok=False, code=planned.refusal_code,
                                  summary=f"Error [{planned.refusal_code}]: {planned.refusal}")
        elif (call.name in self.cfg.config.approval_required or call.needs_approval) and not (
                denial := await self._await_approval(call)).startswith("approved"):
            outcome = ToolOutcome(ok=False, code="approval_denied",
                                  summary=f"Error [approval_denied]: {denial}")
        elif self.strategy.owns_tool(call.name):
            outcome = await self.strategy.run_own_tool(call)
        else:
            return await self._run_tool(call, approved=call.needs_approval)
        self._add_inline("tool", outcome.summary, call.id)
        return outcome

    async def _await_approval(self, call: ToolCallInfo) -> str:
        """Wait for the `approve` update; 'approved…' or why the call was denied."""
        assert self.cfg and self.strategy and self.strategy.phase
        a = self.cfg.config.approvals
        now = workflow.now()
        self.approvals[call.id] = PendingApproval(
            call_id=call.id, tool=call.name, arguments=call.preview or call.summary,
            phase=self.strategy.phase.number, requested_at=now,
            deadline=now + timedelta(seconds=a.timeout_seconds))
        approvals_waiting(len(self.approvals))
        self.status = "waiting_approval"
        self._publish()
        try:
            await workflow.wait_condition(lambda: call.id in self.decisions,
                                          timeout=timedelta(seconds=a.timeout_seconds))
            d = self.decisions.pop(call.id)
            verdict = ("approved" if d.approved else "denied by the operator") + (
                f": {d.note}" if d.note else "")
        except TimeoutError:
            verdict = ("approved" if a.on_timeout == "approve" else "denied") + (
                f" because nobody answered within {a.timeout_seconds:g}s "
                f"(approvals.on_timeout={a.on_timeout})")
        finally:
            self.approvals.pop(call.id, None)
            approvals_waiting(len(self.approvals))
            self.status = "running"
        self._publish()
        return verdict

    async def _run_tool(self, call: ToolCallInfo, approved: bool = False) -> ToolOutcome:
        assert self.cfg and self.ws
        c = self.cfg.config
        req = ToolRequest(workspace=self.ws, conversation=self.conversation,
                          assistant_index=self.last_assistant, call_id=call.id,
                          name=call.name, result_index=self.length,
                          limits=ToolLimits(read_max_chars=c.limits.read_max_chars,
                                            max_file_bytes=c.limits.max_file_bytes,
                                            min_todos=c.phase_settings.min_todos,
                                            max_todos=c.phase_settings.max_todos,
                                            max_result_chars=(c.context.max_tool_result_chars
                                                              if c.context.enabled
                                                              else 1 << 30),
                                            deferred=c.tools.deferred,
                                            search_results=c.tools.search_results,
                                            approved=approved))
        if workflow.patched(INLINE_TOOL_RESULTS):
            req.inline_max_chars = INLINE_MAX_CHARS
        self.length += 1
        timeout = timedelta(seconds=c.retries.tool_timeout_seconds)
        retry = RetryPolicy(
            initial_interval=timedelta(seconds=c.retries.tool_initial_interval_seconds),
            backoff_coefficient=c.retries.tool_backoff, maximum_attempts=c.retries.tool_attempts)
        cancel = workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
        try:
            # cheap workspace tools run as local activities, in this workflow task: no
            # activity task to dispatch, no second workflow task per step
            if call.name in c.tools.local and workflow.patched(LOCAL_TOOL_CALLS):
                outcome = await workflow.execute_local_activity(
                    RUN_TOOL, req, result_type=ToolOutcome, summary=_label(call),
                    start_to_close_timeout=timeout, retry_policy=retry, cancellation_type=cancel)
            else:
                outcome = await workflow.execute_activity(
                    RUN_TOOL, req, result_type=ToolOutcome, task_queue=c.task_queues.tools,
                    summary=_label(call), start_to_close_timeout=timeout,
                    cancellation_type=cancel, retry_policy=retry)
        except ActivityError as e:
            if is_cancelled_exception(e):
                raise
            await self._fail(ReportError(
                f"tool '{call.name}' ({call.summary}) failed after {c.retries.tool_attempts} "
                f"attempts: {_cause(e)}", code="tool_failed"))
            raise  # unreachable: _fail raises
        if not outcome.stored:  # a short result: stored by the next model call
            self.inline.append(InlineMessage(index=req.result_index, role="tool",
                                             content=outcome.summary, tool_call_id=call.id))
        return outcome

    def _add_inline(self, role: str, content: str, call_id: str | None = None) -> None:
        self.inline.append(InlineMessage(index=self.length, role=role, content=content,
                                         tool_call_id=call_id))  # type: ignore[arg-type]
        self.length += 1

    async def _fail(self, err: ReportError) -> None:
        workflow.logger.error("job failed: %s", err.what,
                              extra=log_extra(self.strategy.phase if self.strategy else None))
        self.status, self.last_error = "failed", err.what
        if self.ws is not None:
            ph = self.strategy.phase if self.strategy else None
            await self.write_output("output/error.json", {
                "status": "failed", "code": err.code, "error": err.what,
                "phase": ph.number if ph else None})
        self._publish()
        raise ApplicationError(err.what, {"code": err.code}, type=JOB_FAILED_ERROR,
                               non_retryable=True)
