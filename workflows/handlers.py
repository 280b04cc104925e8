"""The workflow's handlers, for people and tools steering a job: the signals (`rewind`,
`instruct`, `pause`, `resume`), the updates (`approve`, `instruct`) and the `state` query;
and what people see (`_publish`: current details, search attributes, memo; the live stream's
model starts and end: workflows/live.py).
Each hands its input, undecoded, to Steering (workflows/steering.py), which checks it, so no
payload can fail a workflow task; AgentJob (agent_job.py) inherits them."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio import workflow
from temporalio.common import RawValue

with workflow.unsafe.imports_passed_through():
    from switchback.workflows import visibility
    from switchback.workflows.completion import Completion
    from switchback.workflows.contract import INSTRUCT, NO_INPUT, JobState
    from switchback.workflows.job_context import JobContext
    from switchback.workflows.live import LiveEvents
    from switchback.workflows.steering import Steering
    from switchback.workflows.strategies.base import Strategy, StrategyView, Totals


class JobHandlers:
    job: JobContext | None
    strategy: Strategy | None
    steering: Steering
    progress: visibility.Progress
    publisher: visibility.Publisher
    live: LiveEvents
    _ended: bool

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
        return self.job.cfg.config.follow_up.max_turns if self.job else None

    @workflow.query(name="state", description="The live state: phase, todos, tokens, cost, ...")
    def state(self) -> JobState:
        job = self.job
        return visibility.job_state(workflow.info().workflow_id, self.progress, self.steering,
                                    self._view(), job.cfg if job else None,
                                    job.breakers if job else None,
                                    job.ops.completion if job else None,
                                    f"s3://{job.ws.bucket}/{job.ws.job_id}/" if job else "")

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
        cfg = self.job.cfg if self.job else None
        self.publisher.publish(self.state(), cfg is not None and cfg.config.search_attributes,
                               text=cfg is None or not cfg.payloads_encrypted)

    def _model_start(self, call: str) -> None:
        self.live.emit("model.start", call=call, phase=self._phase_number())

    async def _live_end(self, status: str, summary: str) -> None:
        """The live stream's last event; its readers are let go before the job ends."""
        self.live.emit("end", status=status, summary=summary[:2000])
        self.live.close()
        await workflow.wait_condition(workflow.all_handlers_finished)

    def _phase_number(self) -> int:
        ph = self._view().phase
        return ph.number if ph else 0

    # -- the job's parts -----------------------------------------------------------

    def _ctx(self) -> JobContext:
        assert self.job is not None, "the job has no context yet"
        return self.job

    def _strategy(self) -> Strategy:
        assert self.strategy is not None, "the job has no strategy yet"
        return self.strategy

    def _completion(self) -> Completion:
        return self._ctx().ops.completion
