"""`switchback follow`'s lines (operate/live_printer.py), pure: the model's text as it
arrives, a retried attempt written only past what is on the screen, a new attempt that says
something else marked as such, late text of a failed attempt dropped, a line per tool call,
result, refusal and the end."""

from __future__ import annotations

import io
import sys
from typing import Any

from switchback.operate.live_printer import LivePrinter
from switchback.workflows.contract.stream import event


def printed(*events: dict) -> str:
    out = io.StringIO()
    p = LivePrinter(out, "job-1")
    for ev in events:
        p.add(ev)
    p.close()
    return out.getvalue()


def test_text_arrives_and_a_retry_is_not_written_twice() -> None:
    text = printed(
        event("model.start", call="c.m0"),
        event("model.delta", call="c.m0", text="Let me read "),
        event("model.start", call="c.m0", attempt=2),  # the worker died: attempt 2
        event("model.delta", call="c.m0", attempt=2, text="Let me "),
        event("model.delta", call="c.m0", text="the notes first."),  # attempt 1, late
        event("model.delta", call="c.m0", attempt=2, text="read the notes first."),
        event("model.end", call="c.m0", attempt=2, text="Let me read the notes first.",
              tool_calls=["read_file"]),
        event("tool.call", call="call_1", name="read_file", arguments="notes.md"),
        event("tool.result", call="call_1", name="read_file", ok=True, text="# Notes"))
    assert text == ("[model] Let me read the notes first.\n"
                    "  -> read_file notes.md\n"
                    "  <- read_file ok: # Notes\n")


def test_a_new_attempt_that_says_something_else_voids_the_text_shown() -> None:
    text = printed(
        event("model.delta", call="c.m4", text="I will write"),
        event("model.start", call="c.m4", attempt=2),
        event("model.delta", call="c.m4", attempt=2, text="First I read"),
        event("model.end", call="c.m4", attempt=2, text="First I read it."))
    assert text == ("[model] I will write\n"
                    "  [attempt 2 of this call answers again: the text above is void]\n"
                    "[model] First I read it.\n")
    assert text.count("First I read") == 1


def test_refusals_approvals_and_the_end_are_a_line_each() -> None:
    text = printed(
        event("phase", phase="tactical", number=2, title="Draft"),
        event("todos", todos=[{"text": "A", "done": True}, {"text": "B", "done": False}]),
        event("todos", todos=[{"text": "A", "done": True}, {"text": "B", "done": True}]),
        event("guard", call="call_2", name="not_in_phase", message="job_complete is not..."),
        event("approval.waiting", call="call_3", name="delete_file", arguments="a.md"),
        event("end", status="completed", summary="done"))
    assert text.splitlines() == [
        "== phase 2 tactical: Draft", "  todos 1/2 done", "    [x] A", "    [ ] B",
        "  todos 2/2 done", "  refused [not_in_phase]: job_complete is not...",
        "  waiting for approval: delete_file a.md",
        "    python starter.py approve job-1 call_3 [--deny] [--note ...]",
        "== end: completed - done"]


def test_the_approval_hint_names_the_command_the_user_ran(monkeypatch: Any) -> None:
    """An installed wheel's user has `switchback`, a checkout's `python starter.py`."""
    monkeypatch.setattr(sys, "argv", ["/opt/venv/bin/switchback", "follow", "job-1"])
    text = printed(event("approval.waiting", call="call_3", name="delete_file", arguments="a"))
    assert "    switchback approve job-1 call_3 [--deny] [--note ...]" in text.splitlines()
    monkeypatch.setattr(sys, "argv", ["starter.py", "follow", "job-1"])
    text = printed(event("approval.waiting", call="call_3", name="delete_file", arguments="a"))
    assert "    python starter.py approve job-1 call_3 [--deny] [--note ...]" in text.splitlines()
