"""The call budget: every contender gets the same number of model calls per user turn.

A turn may take at most `calls_per_turn` model calls, the one that ends it included (the
plain loop's answer without a call; a job's call that completes the turn). A turn not ended
within them is over budget: the run stops there, that turn is not done and the case is
invalid (`OVER_BUDGET`), as BFCL's loop force-terminates a case at its step limit. Counted
in model calls, not seconds: a job's call costs several times a plain call's on the same
model (a longer prompt), so seconds would buy the plain loop more calls. Wall time
(`--job-timeout`) stays only as a safety stop, a failure.

The engine has no per-turn model-call budget (`breakers.max_steps_per_job` is per job), so
for a job the runner counts: it polls the job's `state` (`steps_total`, one per model call;
`recent`, the last 30 steps with the calls each made) while giving it its turns, and
cancels the job once a turn has taken more calls than the budget. A poll sees the count
after the call that passed it, and the cancel lands when the job next reaches a point that
takes it, so the job may make more calls meanwhile (one on the local model, where a call takes
9-40 s and a poll 0.5 s; under heavy load in CI, several); the turn is over budget all the
same and scored as not done, and what those calls did is not scored. The same
record gives each turn's calls before its first call of a BFCL function
(`first_domain_call`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

DEFAULT_CALLS_PER_TURN = 21  # BFCL's MAXIMUM_STEP_LIMIT (20) steps with calls + the answer
OVER_BUDGET = "over_budget"  # a run's status: a turn took more model calls than the budget
ERROR_TYPE = "switchback:call_budget"  # the verdict of such a run (not one of BFCL's)


@dataclass
class Turns:
    """What the runner saw of a job's turns."""

    ended: str = ""  # OVER_BUDGET, 'timeout' (cancelled at the deadline) or '' (it ended)
    last: Any = None  # the job's last `state`
    calls: list[int] = field(default_factory=list)  # model calls per turn reached
    # per turn reached: model calls before its first BFCL call (None: it made none)
    first_domain_call: list[int | None] = field(default_factory=list)


def called_names(calls: str) -> list[str]:
    """The tool names in a step's one-line summary (`StepLine.calls`: "name summary, name
    summary" or "no tool call"): each piece's first word."""
    return [p.split(" ", 1)[0] for p in calls.split(", ") if p and p != "no tool call"]


def first_domain(steps: dict[int, str], start: int, end: int,
                 domain: Collection[str]) -> int | None:
    """The model calls of the turn of steps start+1..end made before its first call of a
    `domain` function (None: no such call in the turn, or its steps were not seen)."""
    for n in range(start + 1, end + 1):
        if n in steps and any(name in domain for name in called_names(steps[n])):
            return n - start - 1
    return None


async def drive(handle: Any, deadline: float, instruction: Callable[[int], Any],
                calls_per_turn: int, domain: Collection[str], poll: float = 0.5,
                log: Callable[[str], None] = print) -> Turns:
    """Give the job of `handle` its turns (`instruction(turn)` once it waits for the next
    one), count its model calls per turn, and cancel it when a turn passes `calls_per_turn`
    or at `deadline` (time.monotonic())."""
    from temporalio.client import WorkflowExecutionStatus

    from switchback.operate.turns import stop
    from switchback.workflows.contract import INSTRUCT, JobState

    out, start = Turns(), 0
    steps: dict[int, str] = {}  # step number -> its calls (StepLine.calls)

    def close_turn(total: int) -> None:
        out.calls.append(total - start)
        out.first_domain_call.append(first_domain(steps, start, total, domain))

    while (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
        if time.monotonic() > deadline:
            out.ended = await stop(handle)
            break
        try:
            out.last = st = await handle.query("state", result_type=JobState)
        except Exception:  # noqa: BLE001 - not answering yet (starting, worker busy)
            await asyncio.sleep(poll)
            continue
        steps.update({line.step: line.calls for line in st.recent})
        if st.steps_total - start > calls_per_turn:
            await stop(handle)
            out.ended = OVER_BUDGET
            log(f"{handle.id}: turn {st.turn} over the budget of {calls_per_turn} calls")
            break
        if (st.status == "waiting_for_instructions" and st.waiting_until
                and not st.instructions_waiting):
            close_turn(st.steps_total)
            start = st.steps_total
            try:
                await handle.execute_update(INSTRUCT, instruction(st.turn), result_type=str)
                log(f"{handle.id}: turn {st.turn + 1}")
            except Exception as e:  # noqa: BLE001 - refused (the job ended meanwhile)
                log(f"{handle.id}: instruct refused: {e}")
            continue
        await asyncio.sleep(poll)
    with_state = out.last
    try:  # the state as the job ended (needs a worker)
        with_state = await asyncio.wait_for(handle.query("state", result_type=JobState), 30)
    except Exception:  # noqa: BLE001 - no worker answers: the last poll's
        pass
    if with_state is not None:
        out.last = with_state
        steps.update({line.step: line.calls for line in with_state.recent})
        close_turn(with_state.steps_total)
        if not out.ended and out.calls[-1] > calls_per_turn:  # the last turn, past the poll
            out.ended = OVER_BUDGET
    return out


__all__ = ["DEFAULT_CALLS_PER_TURN", "ERROR_TYPE", "OVER_BUDGET", "Turns", "called_names",
           "drive", "first_domain"]
