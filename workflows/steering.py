"""What people ask of a running job: pause, resume, rewind, approve, instruct.

The workflow's signal and update handlers record requests here; the orchestrator
acts on them at step boundaries (pause, rewinds) or while a tool call waits for its
approval (`wait_for_approval`). Plain state, so it survives continue-as-new.

Payloads arrive undecoded and are checked here (workflows/contract/inputs.py): a
`rewind` that does not fit, and a signal of an unknown name, are not dropped silently
but kept in `rejected` (shown in `state`) with the reason; a bad `approve` is refused by
the update's validator. A rewind may name a phase whose start the workspace is restored
to (`restore_phase`):
several rewinds before a boundary are joined, and the last one that names a phase
decides which. `instruct` queues the job's next instruction (a follow-up turn): taken when
the current turn completes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.contract import (
        ApproveRequest,
        InputError,
        PendingApproval,
        ToolCallInfo,
        approve_request,
        follow_up,
        from_raw,
        rewind_request,
    )
    from switchback.workflows.contract.config import ApprovalSettings, FollowUpSettings
    from switchback.workflows.metrics import approvals_waiting


MAX_PENDING_REWINDS = 20  # more before the next step boundary are refused
MAX_QUEUED_INSTRUCTIONS = 10  # follow-up instructions waiting for their turn, at most
MAX_REJECTED = 10  # refused requests kept for `state`


class Steering:
    def __init__(self) -> None:
        self.paused = False
        self.rewinds: list[str] = []  # issues not yet acted on (joined at the next boundary)
        self.approvals: dict[str, PendingApproval] = {}  # call id -> the call waiting
        self.decisions: dict[str, ApproveRequest] = {}  # call id -> the answer, not yet taken
        self.rejected: list[str] = []  # signals refused, with the reason (the last few)
        self.restore_phase: int | None = None  # restore the workspace to this phase's start
        # a nested job's delegation: child job id -> queued | running | paused | its status
        # (workflows/child_jobs.py keeps it; `state` shows it while the children run)
        self.children: dict[str, str] = {}
        self.instructions: list[str] = []  # follow-up instructions not yet taken (`instruct`)
        self.turn = 1  # the job's turn: 1, then one more per instruction taken
        # the tools a queued instruction adds, by the turn it starts (`instruct` "tools")
        self.instruction_tools: dict[int, list[str]] = {}
        self.waiting = False  # a completed turn waits for its next instruction

    def on_signal(self, name: str, args: Sequence[object], phase: int,
                  max_turns: int | None = None, ended: bool = False) -> None:
        """A signal the workflow has no handler of its own for: `rewind` (sent while the job
        is in phase `phase`), `instruct` (the job's `max_turns`, None before its config is
        loaded; `ended`: its result is decided), or one it does not know (recorded as
        rejected). Each takes one input; more are refused, never fail the workflow task."""
        if name == "instruct":
            if len(args) != 1:
                self.reject(f"instruct: takes one input (the instruction), got {len(args)}; "
                            "the signal was ignored")
            else:
                self.on_instruct_signal(args[0], max_turns, ended)
        elif name != "rewind":
            self.reject(f"unknown signal {name[:100]!r} (known: rewind, pause, resume, "
                        "instruct); the signal was ignored")
        elif len(args) > 1:
            self.reject("rewind: takes one input (an issue string or {\"issue\": string, "
                        f"\"restore_phase\": N}}), "
                        f"got {len(args)}; the signal was ignored")
        else:
            self.request_rewind(args[0] if args else None, phase)

    def set_paused(self, paused: bool, args: Sequence[object]) -> None:
        """`pause` / `resume`: they take no input; one given is refused, so that a job is
        never paused or resumed by a request it could not read whole."""
        if args:
            name = "pause" if paused else "resume"
            self.reject(f"{name}: takes no input, got {len(args)}; the signal was ignored")
        else:
            self.paused = paused

    def request_rewind(self, raw: object, phase: int) -> None:
        """The `rewind` signal: an issue string or {"issue": ..., "restore_phase": N}, sent
        while the job is in phase `phase`; refused ones are recorded."""
        if self.waiting:
            self.reject(f"rewind: turn {self.turn} has completed and the job waits for its next "
                        "instruction (send `instruct`); the signal was ignored")
            return
        try:
            value = from_raw(raw, "rewind")
            restore = isinstance(value, Mapping)
            req = rewind_request(value, restore=restore)
        except InputError as e:
            self.reject(f"{e}; the signal was ignored")
            return
        if req.restore_phase is not None and req.restore_phase > phase:
            self.reject(f"rewind: 'restore_phase' {req.restore_phase} has not started yet (the job "
                        f"is in phase {phase}); the signal was ignored")
            return
        if len(self.rewinds) >= MAX_PENDING_REWINDS:
            self.reject(f"rewind: {MAX_PENDING_REWINDS} rewinds already wait for the next step "
                        "boundary; the signal was ignored")
            return
        self.rewinds.append(req.issue or "rewind requested by an operator")
        if req.restore_phase is not None:
            self.restore_phase = req.restore_phase

    def check_instruction(self, raw: object, max_turns: int | None, ended: bool
                          ) -> tuple[str, list[str]]:
        """The `instruct` update's validator (and the signal's check): a well-formed
        instruction for a job that can still take a turn (`max_turns` None: the config is
        not loaded yet - the first task of a run; the turn takes it or says why not), and
        the tools it adds."""
        try:
            text, tools = follow_up(from_raw(raw, "instruct"))
        except InputError as e:
            raise ApplicationError(str(e), type="BadRequest", non_retryable=True) from None
        if ended:
            raise ApplicationError("instruct: the job has ended; start a new job")
        if len(self.instructions) >= MAX_QUEUED_INSTRUCTIONS:
            raise ApplicationError(f"instruct: {MAX_QUEUED_INSTRUCTIONS} instructions already "
                                   "wait for their turn; the instruction was refused")
        turns = self.turn + len(self.instructions)
        if max_turns is not None and turns >= max_turns:
            raise ApplicationError(f"instruct: the job has {turns} turns (follow_up.max_turns="
                                   f"{max_turns}); the instruction was refused")
        return text, tools

    def queue_instruction(self, checked: tuple[str, list[str]]) -> str:
        text, tools = checked
        self.instructions.append(text)
        turn = self.turn + len(self.instructions)
        if tools:
            self.instruction_tools[turn] = tools
        return (f"instruction queued as turn {turn}: it starts when the current turn "
                "completes" + (f", with {len(tools)} more tools" if tools else ""))

    def on_instruct_signal(self, raw: object, max_turns: int | None, ended: bool) -> None:
        """The `instruct` signal (the Temporal CLI's and the web UI's way): like the update,
        a refused one is kept in `rejected`."""
        try:
            self.queue_instruction(self.check_instruction(raw, max_turns, ended))
        except ApplicationError as e:
            self.reject(f"{e.message}; the signal was ignored")

    def end_turns(self, why: str) -> None:
        """The job's result is decided: queued instructions and waiting rewinds are dropped,
        each listed in `rejected` with `why`."""
        self.drop_instructions(why)
        self.drop_rewinds(why)

    def drop_instructions(self, why: str) -> None:
        """The job ends: instructions still queued are not taken; `rejected` says so."""
        for n, _ in enumerate(self.instructions, self.turn + 1):
            self.reject(f"instruct: the instruction for turn {n} was not taken: {why}")
        self.instructions, self.instruction_tools = [], {}

    def drop_rewinds(self, why: str) -> None:
        """Rewinds still waiting for a step boundary when a turn ends are not acted on;
        `rejected` says so."""
        for issue in self.rewinds:
            self.reject(f"rewind: not acted on ({why}): {issue[:200]}")
        self.rewinds, self.restore_phase = [], None

    def reject(self, why: str) -> None:
        at = workflow.now().strftime("%Y-%m-%d %H:%M:%S")
        self.rejected = [*self.rejected, f"{at} {why}"][-MAX_REJECTED:]

    def check_approval(self, raw: object) -> ApproveRequest:
        """The `approve` update's validator: a well-formed answer for a call that waits."""
        try:
            req = approve_request(from_raw(raw, "approve"))
        except InputError as e:
            raise ApplicationError(str(e), type="BadRequest", non_retryable=True) from None
        if req.call_id not in self.approvals:
            waiting = ", ".join(self.approvals) or "none"
            raise ApplicationError(f"no tool call '{req.call_id}' is waiting for approval "
                                   f"(waiting: {waiting})")
        return req

    def decide(self, raw: object) -> str:
        req = approve_request(from_raw(raw, "approve"))  # the validator has passed it
        self.decisions[req.call_id] = req
        tool = self.approvals[req.call_id].tool
        return f"{'approved' if req.approved else 'denied'} {tool} call {req.call_id}"

    def take_rewinds(self) -> tuple[str, int | None]:
        """The rewind issues asked for since the last boundary, joined ('' for none), and
        the phase whose start the workspace is to be restored to (None: keep the files)."""
        issue, self.rewinds = "; ".join(self.rewinds), []
        restore, self.restore_phase = self.restore_phase, None
        return issue, restore

    async def next_turn(self, status: str, settings: FollowUpSettings,
                        on_wait: Callable[[str], None]) -> str | None:
        """After a turn that ended `status`: the next turn's instruction, or None - the job
        ends with that turn's result (what is queued is dropped, saying why). Only a
        `completed` turn has a next one, up to `max_turns`: the first instruction queued,
        else one that arrives within `wait_seconds` (`on_wait` is told until when, then "").
        A cancel request ends the wait, not the completed turn."""
        if status != "completed":
            self.end_turns(f"the job ended {status}")
            return None
        if self.turn >= settings.max_turns:
            self.end_turns(f"the job had its {self.turn} turns (follow_up.max_turns)")
            return None  # (the last turn: no instruction can be taken, none is waited for)
        if not (self.instructions or settings.wait_seconds):
            return None
        self.drop_rewinds(f"turn {self.turn} completed first")
        try:
            return await self._next_instruction(settings.wait_seconds, on_wait)
        except asyncio.CancelledError:
            self.end_turns("a cancel request ended the wait")
            return None

    async def _next_instruction(self, wait_seconds: float,
                                on_wait: Callable[[str], None]) -> str | None:
        """The first queued instruction, else one that arrives within `wait_seconds`
        (`waiting` meanwhile); the turn counts on. None: none came."""
        if not self.instructions:
            self.waiting = True
            on_wait((workflow.now() + timedelta(seconds=wait_seconds)).isoformat(
                timespec="seconds"))
            try:
                await workflow.wait_condition(lambda: bool(self.instructions),
                                              timeout=timedelta(seconds=wait_seconds))
            except TimeoutError:
                if not self.instructions:  # (one may arrive with the timer)
                    return None
            finally:
                self.waiting = False
                on_wait("")
        self.turn += 1
        return self.instructions.pop(0)

    async def wait_for_approval(self, call: ToolCallInfo, settings: ApprovalSettings,
                                phase: int, on_status: Callable[[str], None]) -> str:
        """Wait for the `approve` update on `call`: 'approved…' or why it was denied."""
        now = workflow.now()
        self.approvals[call.id] = PendingApproval(
            call_id=call.id, tool=call.name, arguments=call.preview or call.summary,
            phase=phase, requested_at=now,
            deadline=now + timedelta(seconds=settings.timeout_seconds))
        approvals_waiting(len(self.approvals))
        on_status("waiting_approval")
        try:
            await workflow.wait_condition(lambda: call.id in self.decisions,
                                          timeout=timedelta(seconds=settings.timeout_seconds))
            d = self.decisions.pop(call.id)
            verdict = ("approved" if d.approved else "denied by the operator") + (
                f": {d.note}" if d.note else "")
        except TimeoutError:
            verdict = ("approved" if settings.on_timeout == "approve" else "denied") + (
                f" because nobody answered within {settings.timeout_seconds:g}s "
                f"(approvals.on_timeout={settings.on_timeout})")
        finally:
            self.approvals.pop(call.id, None)
            approvals_waiting(len(self.approvals))
        on_status("running")
        return verdict
