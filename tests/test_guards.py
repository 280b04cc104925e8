"""The guard pipeline (workflows/guards.py): every refusal the model reads is a named guard,
in one shape, and the call guards every strategy shares run in order on a turn."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from switchback.activities.config_files import load_config
from switchback.workflows import guards
from switchback.workflows.contract import ToolCallInfo
from switchback.workflows.contract.config import MAX_TOOL_CALLS_PER_STEP

ROOT = Path(__file__).resolve().parent.parent


def calls(*names: str, error: int | None = None) -> list[ToolCallInfo]:
    return [ToolCallInfo(id=f"c{i}", name=n, error="bad" if i == error else None)
            for i, n in enumerate(names)]


def screen(names: list[ToolCallInfo], offered: list[str], *own: guards.CallGuard
           ) -> list[guards.PlannedCall]:
    cfg = load_config({"extends": "defaults", "tools": {"domain": ["word_count"]}},
                      policy=False)
    return guards.screen(names, offered, "tactical", cfg, own)


def test_the_call_guards_refuse_in_order_with_one_shape():
    out = screen(calls("read_file", "word_count", "nope", "write_file", "job_complete",
                       "job_complete", error=3),
                 ["read_file", "write_file", "job_complete"])
    assert [p.refusal_code for p in out] == ["", "tool_not_allowed", "unknown_tool",
                                             "invalid_arguments", "", "claimed_before"]
    assert out[1].outcome().summary == (
        "Error [tool_not_allowed]: tool 'word_count' is not available in the tactical phase. "
        "Available: read_file, write_file, job_complete")
    assert out[3].outcome().summary == "Error [invalid_arguments]: bad"
    assert [p.outcome().code for p in out if p.refusal] == [
        "tool_not_allowed", "unknown_tool", "invalid_arguments", "claimed_before"]


def test_a_turn_runs_its_first_calls_only():
    out = screen(calls(*["read_file"] * (MAX_TOOL_CALLS_PER_STEP + 2)), ["read_file"])
    assert [p.refusal_code for p in out].count("too_many_calls") == 2
    assert out[MAX_TOOL_CALLS_PER_STEP - 1].refusal is None


def test_one_todo_complete_per_turn_and_job_complete_last():
    own = (guards.one_todo_per_turn, guards.job_completing)
    offered = ["write_file", "todo_complete", "todo_rewind", "job_complete"]
    out = screen(calls("write_file", "todo_complete", "write_file", "todo_complete"), offered,
                 *own)
    assert [p.refusal_code for p in out] == ["", "", "", "one_todo_per_turn"]
    out = guards.job_complete_last(screen(
        calls("todo_complete", "job_complete", "write_file", "todo_rewind"), offered, *own))
    assert [p.call.name for p in out] == ["todo_complete", "write_file", "todo_rewind",
                                          "job_complete"]
    assert [p.refusal_code for p in out] == ["job_completing", "", "job_completing", ""]
    # a job_complete this phase does not offer ends nothing: the todo_complete runs
    out = screen(calls("todo_complete", "job_complete"), ["todo_complete"], *own)
    assert [p.refusal_code for p in out] == ["", "tool_not_allowed"]


def test_an_unnamed_guard_cannot_refuse():
    with pytest.raises(AssertionError):
        guards.refusal("made_up", "no")


def _codes_built(path: Path) -> set[str]:
    """The refusal codes a module builds: guards.refusal("<code>", ...), a guard's
    ("<code>", message) verdict, and ToolOutcome(ok=False, code="<code>", ...)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name == "refusal" and node.args and isinstance(node.args[0], ast.Constant):
                found.add(str(node.args[0].value))
            if name == "ToolOutcome" and any(
                    k.arg == "ok" and isinstance(k.value, ast.Constant) and k.value.value is False
                    for k in node.keywords):
                found |= {str(k.value.value) for k in node.keywords
                          if k.arg == "code" and isinstance(k.value, ast.Constant)}
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(
                node.value.elts) == 2 and isinstance(node.value.elts[0], ast.Constant):
            found.add(str(node.value.elts[0].value))
    return found


def test_every_refusal_of_the_workflow_is_a_named_guard():
    """No module of the workflow refuses a call outside the pipeline: every code a module
    builds for a refused call is in guards.GUARDS (approval_denied is a person's answer)."""
    built = set().union(*(_codes_built(p) for p in (ROOT / "workflows").rglob("*.py")))
    assert built - set(guards.GUARDS) - {"approval_denied"} == set()
    assert {"job_incomplete", "claim_unseen", "plan_repeats", "todo_not_done",
            "step_incomplete"} <= built
