"""Wait for a job to end, giving it its follow-up turns and stopping it at a deadline.

`starter.py eval` (a config's `turn-<N>.md`) and `starter.py bfcl` (a case's user turns)
send each next instruction the way a person would: once the job has completed a turn and
waits for one (state `waiting_for_instructions`, the config's `follow_up.wait_seconds`), with
the `instruct` update. A job still running at the deadline is cancelled: the caller counts
it as a run that timed out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

TIMEOUT = "timeout"  # what `await_end` says of a job it cancelled at the deadline


async def await_end(handle: Any, deadline: float | None,
                    instruction: Callable[[int], Any] | None = None, poll: float = 0.5,
                    log: Callable[[str], None] = print) -> tuple[str, Any]:
    """Wait until the job of `handle` closes; ('timeout' if it was cancelled here at
    `deadline` (time.monotonic()) else '', its last `state`). With `instruction`, each time
    the job waits for its next turn it is sent `instruction(turn)` (`turn`: the job's turn
    that completed, 1 the first), unless that is None. Without, the state is not polled."""
    from temporalio.client import WorkflowExecutionStatus

    from switchback.workflows.contract import INSTRUCT, JobState

    if instruction is None:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            await asyncio.wait_for(handle.result(), left)
        except TimeoutError:
            return await stop(handle), None
        except Exception:  # noqa: BLE001 - it failed or was cancelled: the caller reads how
            pass
        return "", None
    last: Any = None
    while (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
        if deadline is not None and time.monotonic() > deadline:
            return await stop(handle), last
        try:
            last = st = await handle.query("state", result_type=JobState)
        except Exception:  # noqa: BLE001 - not answering yet (starting, worker busy)
            await asyncio.sleep(poll)
            continue
        # waiting for the next turn (`waiting_until` set: the wait has begun)
        if (st.status == "waiting_for_instructions" and st.waiting_until
                and not st.instructions_waiting):
            nxt = instruction(st.turn)
            if nxt is None:  # nothing more to say: the job ends when its wait does
                await asyncio.sleep(poll)
                continue
            try:
                await handle.execute_update(INSTRUCT, nxt, result_type=str)
                log(f"{handle.id}: turn {st.turn + 1}")
            except Exception as e:  # noqa: BLE001 - refused (the job ended meanwhile)
                log(f"{handle.id}: instruct refused: {e}")
            continue
        await asyncio.sleep(poll)
    return "", last


async def stop(handle: Any) -> str:
    """Cancel the job at its deadline: TIMEOUT, or '' when it had ended meanwhile."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError

    if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
        return ""
    try:
        await handle.cancel()
    except RPCError:  # it closed between the two
        return ""
    return TIMEOUT
