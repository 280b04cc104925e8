"""Score a run with BFCL's own `multi_turn_checker`, from the calls the tools recorded.

BFCL's evaluation (`eval_runner._evaluate_single_multi_turn_entry`) fails a run whose
number of turns differs from the ground truth's ("force_terminated"), drops empty steps,
then calls `multi_turn_checker`, which re-executes the run's calls on fresh API objects
turn by turn and compares the objects' state and the calls' results with the ground
truth's. The tools record one list of calls per turn; each turn is passed as one step
(the checker joins a turn's steps, so the split does not change the verdict).

The case and its ground truth come from bfcl-eval's data by the case id, never from the
workspace. Every check uses a model name of its own (the checker caches its API objects
in module globals under the model name and case id) and drops its objects afterwards.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from switchback import Files
from switchback_bfcl import _bfcl, cases, state


@dataclass
class CheckResult:
    valid: bool
    # BFCL's verdict when invalid: error_type, error_message and details
    error: dict[str, Any] | None = None


def check_calls(case_id: str, turns: Sequence[Sequence[str]]) -> CheckResult:
    """Check the calls of a run of case `case_id`, a list per turn of call strings."""
    truth = cases.ground_truth(case_id)
    if len(turns) != len(truth):
        return CheckResult(False, {
            "error_type": "multi_turn:force_terminated",
            "error_message": [f"Model was force-terminated during inference phase. The length "
                              f"of the model result turns ({len(turns)}) does not match the "
                              f"length of the ground truth turns ({len(truth)})."]})
    return _check(case_id, turns, truth)


def _check(case_id: str, turns: Sequence[Sequence[str]],
           truth: Sequence[Sequence[str]]) -> CheckResult:
    """BFCL's checker on `turns` against `truth`, as many turns each. BFCL evaluates the
    call strings: each must parse as one call of a known function with literal arguments."""
    for calls in turns:
        for c in calls:
            try:
                state.parse_call(c)
            except state.StateError as e:
                return CheckResult(False, {"error_type": "switchback:bad_call_record",
                                           "error_message": str(e)})
    case = cases.load_case(case_id)
    decoded = [[list(calls)] if calls else [] for calls in turns]
    model = f"switchback_bfcl_check_{uuid.uuid4().hex}"
    with state.LOCK:
        try:
            result = dict(_bfcl.multi_turn_checker.multi_turn_checker(
                decoded, list(truth), case, case_id.rsplit("_", 1)[0], model))
        finally:
            state.forget(model)
    valid = bool(result.pop("valid"))
    return CheckResult(True) if valid else CheckResult(False, result)


def turns_right(case_id: str, turns: Sequence[Sequence[str]]) -> int:
    """How many turns from the first BFCL's checker accepts: the largest k for which the
    run's first k turns check valid against the ground truth's first k. Partial credit
    beside BFCL's all-or-nothing verdict (a run valid in every turn has them all)."""
    truth = cases.ground_truth(case_id)
    right = 0
    for k in range(1, min(len(turns), len(truth)) + 1):
        if not _check(case_id, turns[:k], truth[:k]).valid:
            break
        right = k
    return right


def recorded_turns(case_text: str | None, instructions_text: str | None,
                   calls_text: str | None) -> tuple[str, list[list[str]]]:
    """(case id, the calls per turn) from the workspace files; the turns the job reached
    (the follow-up instructions in instructions.md) count even when the model made no call
    in them."""
    case_id = state.read_case(case_text)["id"]
    turns = state.Record.parse(calls_text).turns
    reached = state.turn_of(instructions_text) + 1
    return case_id, turns + [[] for _ in range(reached - len(turns))]


def check_files(files: Mapping[str, str]) -> CheckResult:
    """Check the run recorded in workspace files given as {path: text}."""
    case_id, turns = recorded_turns(files.get(state.CASE_PATH),
                                    files.get(state.INSTRUCTIONS_PATH),
                                    files.get(state.CALLS_PATH))
    return check_calls(case_id, turns)


async def check_workspace(files: Files) -> CheckResult:
    """Check the run recorded in a job's workspace (`ctx.files` or any `switchback.Files`)."""
    case_id, turns = recorded_turns(await files.read_optional(state.CASE_PATH),
                                    await files.read_optional(state.INSTRUCTIONS_PATH),
                                    await files.read_optional(state.CALLS_PATH))
    return await asyncio.to_thread(check_calls, case_id, turns)


__all__ = ["CheckResult", "check_calls", "check_files", "check_workspace", "recorded_turns",
           "turns_right"]
