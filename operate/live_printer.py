"""The live stream as terminal lines (`switchback follow`; docs/live.md).

Pure: events in, text out. The model's text is written as it arrives, under a `[model]`
line; a retried call's new attempt is written only from where it goes beyond what was
already shown, so text already on the screen is never written twice. When the new attempt
says something else than the failed one did, a line says that the text above it is void
and the new attempt's text follows. A tool call, its result, a phase, todos, a refusal, a
breaker, an approval waiting and the end are a line each.
"""

from __future__ import annotations

from typing import Any, TextIO

from switchback.operate import command_name
from switchback.operate.live import Transcript

WIDTH = 160


def _line(text: object, width: int = WIDTH) -> str:
    one = " ".join(str(text).split())
    return one if len(one) <= width else one[:width - 1] + "…"


class LivePrinter:
    def __init__(self, out: TextIO, job_id: str = "") -> None:
        self.out, self.job_id = out, job_id
        self.transcript = Transcript()
        self.shown: dict[str, str] = {}  # call -> the text written for it
        self.open: str | None = None  # the call whose text is being written (no newline yet)
        self._todos: list[str] = []

    def add(self, ev: dict[str, Any]) -> None:
        kind = str(ev.get("kind", ""))
        if kind.startswith("model."):
            self._model(ev, kind)
            return
        text = self._describe(kind, ev)
        if text:
            self._close()
            self.out.write(text + "\n")
            self.out.flush()

    def close(self) -> None:
        self._close()

    def _model(self, ev: dict[str, Any], kind: str) -> None:
        ct = self.transcript.add(ev)
        if ct is None:
            return
        shown, text = self.shown.get(ct.call, ""), ct.text
        if text.startswith(shown):
            more = text[len(shown):]
            self.shown[ct.call] = text
        elif shown.startswith(text):  # a new attempt, not yet past what is shown
            more = ""
        else:  # the new attempt says something else: the text shown is void
            self._close()
            self.out.write(f"  [attempt {ct.attempt} of this call answers again: the text "
                           "above is void]\n")
            more, self.shown[ct.call] = text, text
            self.open = None
        if more:
            if self.open != ct.call:
                self._close()
                self.out.write("[model] ")
                self.open = ct.call
            self.out.write(more)
        if kind == "model.end":  # (its tool calls follow, a line each)
            self._close()
        self.out.flush()

    def _close(self) -> None:
        if self.open is not None:
            self.out.write("\n")
            self.open = None

    def _describe(self, kind: str, ev: dict[str, Any]) -> str:
        name = ev.get("name", "")
        if kind == "phase":
            return f"== phase {ev.get('number')} {ev.get('phase')}: {_line(ev.get('title', ''))}"
        if kind == "todos":
            todos = [t for t in ev.get("todos") or [] if isinstance(t, dict)]
            texts = [str(t.get("text", "")) for t in todos]
            done = sum(1 for t in todos if t.get("done"))
            head = f"  todos {done}/{len(todos)} done"
            if texts == self._todos:
                return head
            self._todos = texts
            return "\n".join([head] + [f"    [{'x' if t.get('done') else ' '}] "
                                       f"{_line(t.get('text', ''), 120)}" for t in todos])
        if kind == "tool.call":
            return f"  -> {name} {_line(ev.get('arguments', ''))}"
        if kind == "tool.result":
            return f"  <- {name} {'ok' if ev.get('ok') else 'error'}: {_line(ev.get('text', ''))}"
        if kind == "guard":
            return f"  refused [{name}]: {_line(ev.get('message', ''))}"
        if kind == "breaker":
            return f"  breaker {name}: {_line(ev.get('message', ''))}"
        if kind == "outcome.unknown":
            return f"  outcome unknown: {name} ({ev.get('call')})"
        if kind == "approval.waiting":
            return (f"  waiting for approval: {name} {_line(ev.get('arguments', ''), 120)}\n"
                    f"    {command_name()} approve {self.job_id} {ev.get('call')} "
                    "[--deny] [--note ...]")
        if kind == "approval.decided":
            return f"  approval: {name} {'approved' if ev.get('approved') else 'denied'}"
        if kind == "turn":
            return f"== turn {ev.get('turn')}: {_line(ev.get('instruction', ''))}"
        if kind == "end":
            return f"== end: {ev.get('status')} - {_line(ev.get('summary', ''))}"
        return ""
