"""The guard pipeline: every "refuse and tell the model" of the engine, named, in one place.

A guard answers one tool call of the model's turn: let it run (None) or refuse it with a
message. A refused call is never executed; the model reads `Error [<guard>]: <message>`, the
one shape every refusal has (`refusal`). Guards run in the order of the pipeline, each on
the calls no earlier guard refused:

    at planning (screen)   the call guards every strategy shares (CALL_GUARDS), then the
                           strategy's own for its phase (a strategy passes them to `screen`)
    at running (agent_job) `skipped` (an earlier call ended the phase), the claim guards of
                           job_complete (the completion service: `claim_unseen`,
                           `job_incomplete`), then approvals (a person's answer, not a guard)
    in a control tool      a claim the strategy checks when its tool runs (`todo_not_done`,
                           `transition_rejected`, `step_incomplete`, `plan_rejected`, ...)

`GUARDS` lists every guard with its budget: how often it refuses before it lets a call
through, where it has one. tests/test_guards.py holds every refusal code in the engine to
this list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from switchback.workflows.contract import ToolCallInfo, ToolOutcome
from switchback.workflows.contract.config import MAX_TOOL_CALLS_PER_STEP, ResolvedConfig


@dataclass(frozen=True)
class Guard:
    name: str  # the code the model reads
    what: str  # what it refuses, in a line
    budget: str = "always"  # how often it refuses before it lets the call through


GUARDS: dict[str, Guard] = {g.name: g for g in (
    Guard("too_many_calls", f"the calls of a turn after its first {MAX_TOOL_CALLS_PER_STEP}"),
    Guard("tool_not_loaded", "a deferred tool tool_search has not loaded yet"),
    Guard("tool_not_allowed", "a tool of the job that this phase does not offer"),
    Guard("unknown_tool", "a tool the job does not have"),
    Guard("invalid_arguments", "arguments that fail the tool's schema"),
    Guard("claimed_before", "a job_complete after the answer's first"),
    Guard("profile_refused", "a call the job's model profile refuses at the reply "
          "(activities/model/profiles; its message names the rule)"),
    Guard("one_todo_per_turn", "a todo_complete after the turn's first (phase_alternation)"),
    Guard("job_completing", "a todo_complete or todo_rewind in a turn that calls job_complete"),
    Guard("not_this_todo", "a strategic phase's write of a file its current todo does not ask "
          "for (phase_alternation)"),
    Guard("plan_repeats", "a todo_write that repeats the predefined todos, the prompt's own "
          "bullets or done work (phase_alternation)"),
    Guard("skipped", "the calls after one that ended the phase"),
    Guard("claim_unseen", "a job_complete in the same answer as a call that failed",
          "once per turn"),
    Guard("job_incomplete", "a job_complete whose deliverables are not there",
          "completion.max_refusals per turn, then the job's end holds the claim"),
    Guard("todo_not_done", "a todo_complete whose todo's files did not change "
          "(phase_alternation)"),
    Guard("no_open_todo", "a todo_complete with no todo open (phase_alternation)"),
    Guard("transition_rejected", "the strategic phase's last todo_complete while todos.yaml "
          "fails the gate (phase_alternation)"),
    Guard("plan_rejected", "a submit_plan that is not a plan (plan_revise_execute)"),
    Guard("step_incomplete", "a done step_result naming files not in the workspace "
          "(plan_revise_execute)", "completion.max_refusals per step"),
)}


def refusal(guard: str, message: str) -> ToolOutcome:
    """What the model reads instead of the call's result."""
    assert guard in GUARDS, f"unnamed guard {guard!r}"
    return ToolOutcome(ok=False, code=guard, summary=f"Error [{guard}]: {message}")


@dataclass
class PlannedCall:
    call: ToolCallInfo
    refusal: str | None = None  # set: never executed, the model gets this error
    refusal_code: str = ""  # the guard that refused it

    def refused(self, guard: str, message: str) -> PlannedCall:
        return PlannedCall(self.call, message, guard)

    def outcome(self) -> ToolOutcome:
        assert self.refusal is not None
        return refusal(self.refusal_code, self.refusal)


@dataclass
class Turn:
    """What a call guard sees: the model's calls of this turn and the verdicts so far."""

    calls: list[ToolCallInfo]
    offered: list[str]
    kind: str  # the phase (or stage) kind, as the model is told
    cfg: ResolvedConfig
    planned: list[PlannedCall] = field(default_factory=list)  # the calls before, decided

    def earlier(self, name: str) -> int:
        """Calls of `name` before this one that are to run."""
        return sum(p.refusal is None and p.call.name == name for p in self.planned)


# a guard: (call, turn) -> (guard name, message) when it refuses, else None
CallGuard = Callable[[ToolCallInfo, Turn], tuple[str, str] | None]


def too_many_calls(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
    if len(turn.planned) < MAX_TOOL_CALLS_PER_STEP:
        return None
    return "too_many_calls", (f"too many tool calls in one turn (limit "
                              f"{MAX_TOOL_CALLS_PER_STEP}); this one was not run")


def not_offered(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
    if call.name in turn.offered:
        return None
    tools, offered = turn.cfg.config.tools, ", ".join(turn.offered)
    if "tool_search" in turn.offered and call.name in tools.deferred:
        return "tool_not_loaded", (f"tool '{call.name}' is not loaded yet: call tool_search "
                                   "with what you want to do to load it")
    if call.name in tools.known():
        return "tool_not_allowed", (f"tool '{call.name}' is not available in the {turn.kind} "
                                    f"phase. Available: {offered}")
    return "unknown_tool", f"unknown tool '{call.name}'. Available: {offered}"


def invalid_arguments(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
    return ("invalid_arguments", call.error) if call.error else None


def profile_refused(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
    return ("profile_refused", call.profile_refusal) if call.profile_refusal else None


def claimed_before(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
    if call.name != "job_complete" or not turn.earlier("job_complete"):
        return None
    return "claimed_before", ("not run: job_complete is taken once per answer, and this "
                              "answer called it before; read that call's result first")


def one_todo_per_turn(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
    if call.name != "todo_complete" or not turn.earlier("todo_complete"):
        return None
    return "one_todo_per_turn", ("only 1 todo_complete takes effect per turn; this one was "
                                 "not run. Do the work of the current todo first, then call "
                                 "todo_complete again")


def job_completing(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
    """A call that would end the phase before the turn's job_complete runs (the job_complete
    itself runs last: `job_complete_last`)."""
    if call.name not in ("todo_complete", "todo_rewind", "job_complete"):
        return None
    first = next((c for c in turn.calls if c.name == "job_complete" and not c.error
                  and c.name in turn.offered), None)
    if first is None or first is call:
        return None
    return "job_completing", "not run: this turn calls job_complete, which ends the job"


CALL_GUARDS: tuple[CallGuard, ...] = (too_many_calls, not_offered, invalid_arguments,
                                      profile_refused, claimed_before)


def screen(calls: list[ToolCallInfo], offered: list[str], kind: str, cfg: ResolvedConfig,
           own: Sequence[CallGuard] = ()) -> list[PlannedCall]:
    """The turn's calls through the pipeline: CALL_GUARDS, then the strategy's `own`."""
    turn = Turn(calls, offered, kind, cfg)
    for call in calls:
        verdict = next((v for g in (*CALL_GUARDS, *own) if (v := g(call, turn))), None)
        turn.planned.append(PlannedCall(call) if verdict is None
                            else PlannedCall(call).refused(*verdict))
    return turn.planned


def job_complete_last(planned: list[PlannedCall]) -> list[PlannedCall]:
    """The turn with its job_complete (if it is to run) moved to the end: no call before it
    can end the phase and skip it."""
    jc = [p for p in planned if p.refusal is None and p.call.name == "job_complete"]
    return [p for p in planned if p not in jc] + jc
