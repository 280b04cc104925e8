"""The job's live event stream, workflow side (docs/live.md, workflows/contract/stream.py).

The job hosts a Temporal Workflow Stream (`temporalio.contrib.workflow_streams`), made in
`AgentJob.__init__` from the state its previous run carried (continue-as-new). What the
workflow publishes itself - phases, todos, a model call's start and its reply, tool calls
and results, refusals, breakers, approvals, turns, the end - is appended in workflow code:
no command, no history event (a reader's poll, a query or an update, carries them). Only
the model's tokens come from outside, published by the model activity in batches
(activities/model/live_tokens.py): a signal each.

Retention is bounded: at every event the log keeps the newest `live_retain` (the operator's
SWITCHBACK_LIVE_RETAIN, 1,000 by default; 0: the workflow publishes nothing); a
continue-as-new carries them (at most MAX_CARRIED_BYTES of them), so offsets go on across
runs and a reader resumes where it was.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.contrib.workflow_streams import WorkflowStream, WorkflowStreamState

with workflow.unsafe.imports_passed_through():
    from pydantic import TypeAdapter

    from switchback.workflows.breakers import Trip
    from switchback.workflows.completion.state import UNKNOWN_OUTCOME
    from switchback.workflows.contract import ModelReply, ToolCallInfo, ToolOutcome, from_raw
    from switchback.workflows.contract.stream import (
        ARGUMENTS_CHARS,
        RESULT_CHARS,
        TEXT_CHARS,
        TOPIC,
        clip,
        event,
    )
    from switchback.workflows.strategies.base import PhaseInfo

MAX_CARRIED_BYTES = 512_000  # the events a continue-as-new carries, base64 (2 MB payload cap)


def carried_state(raw: object) -> WorkflowStreamState | None:
    """The stream state in a continued run's input (`carry.stream`), or None; never raises:
    the input is checked, and refused, by the run itself (workflows/carry.py)."""
    try:
        data = from_raw(raw, "job input")
        carry = data.get("carry") if isinstance(data, Mapping) else None
        state = carry.get("stream") if isinstance(carry, Mapping) else None
        if state is None:
            return None
        return TypeAdapter(WorkflowStreamState).validate_python(state)
    except Exception:
        return None


class LiveEvents:
    """What the workflow publishes, and the stream's retention."""

    def __init__(self, stream: WorkflowStream, carried: WorkflowStreamState | None = None
                 ) -> None:
        self.stream = stream
        self.topic = stream.topic(TOPIC)
        self.retain = 1000  # events kept (the worker's say: ResolvedConfig.live_retain)
        self._phase: tuple[str, int] | None = None
        self._todos: list[tuple[str, bool]] | None = None
        for item in carried.log if carried else []:  # what the run before last said
            self._seen(item.data)

    def _seen(self, wire: str) -> None:
        """A carried event: the phase and todos it told, so they are not told again."""
        payload = Payload()
        payload.ParseFromString(base64.b64decode(wire))
        try:
            ev = workflow.payload_converter().from_payload(payload)
        except Exception:
            return
        if isinstance(ev, dict) and ev.get("kind") == "phase":
            self._phase = (str(ev.get("phase")), int(ev.get("number") or 0))
        elif isinstance(ev, dict) and ev.get("kind") == "todos":
            self._todos = [(str(t.get("text")), bool(t.get("done")))
                           for t in ev.get("todos") or [] if isinstance(t, dict)]

    def emit(self, kind: str, *, call: str = "", attempt: int = 1, **fields: Any) -> None:
        if not self.retain:  # the operator turned the stream off
            return
        self.topic.publish(event(kind, call=call, attempt=attempt, at=workflow.now().isoformat(
            timespec="milliseconds"), **fields))
        end = self.stream._on_offset()  # (the stream has no public length yet)
        self.stream.truncate(end - self.retain)

    def observe(self, phase: PhaseInfo | None) -> None:
        """At a step boundary: a `phase` event when the phase changed, `todos` when they did."""
        if phase is None:
            return
        key = (phase.kind, phase.number)
        if key != self._phase:
            self._phase = key
            self.emit("phase", phase=phase.kind, number=phase.number, title=phase.title)
        todos = [(t.content, t.status == "completed") for t in phase.todos]
        if todos != self._todos:
            self._todos = todos
            self.emit("todos", todos=[{"text": t, "done": d} for t, d in todos])

    def model_end(self, call: str, reply: ModelReply) -> None:
        self.emit("model.end", call=call, attempt=reply.attempt,
                  text=clip(reply.content, TEXT_CHARS),
                  tool_calls=[c.name for c in reply.tool_calls])

    def tool_call(self, call: ToolCallInfo) -> None:
        self.emit("tool.call", call=call.id, name=call.name,
                  arguments=clip(call.preview or call.summary, ARGUMENTS_CHARS))

    def tool_outcome(self, call: ToolCallInfo, outcome: ToolOutcome, refused: bool) -> None:
        """A call's result; a refusal (a guard, a denied approval) is a `guard` event."""
        if outcome.code == UNKNOWN_OUTCOME:
            self.emit("outcome.unknown", call=call.id, name=call.name)
        if refused:
            self.emit("guard", call=call.id, name=outcome.code,
                      message=clip(outcome.summary, RESULT_CHARS))
        else:
            self.emit("tool.result", call=call.id, name=call.name, ok=outcome.ok,
                      text=clip(outcome.summary, RESULT_CHARS))

    def breaker(self, trip: Trip) -> None:
        self.emit("breaker", name=trip.breaker, message=clip(trip.message, RESULT_CHARS),
                  action=trip.action)

    def approval(self, call: ToolCallInfo, verdict: str | None = None) -> None:
        """A call waits for the `approve` update (`verdict` None), or was decided."""
        if verdict is None:
            self.emit("approval.waiting", call=call.id, name=call.name,
                      arguments=clip(call.preview, ARGUMENTS_CHARS))
        else:
            self.emit("approval.decided", call=call.id, name=call.name,
                      approved=verdict.startswith("approved"), note=clip(verdict, 300))

    def carry(self) -> WorkflowStreamState:
        """The state the next run starts from: the newest events, MAX_CARRIED_BYTES at most."""
        self.stream.detach_pollers()
        state = self.stream.get_state()
        size = sum(len(i.data) for i in state.log)
        while state.log and size > MAX_CARRIED_BYTES:
            size -= len(state.log.pop(0).data)
            state.base_offset += 1
        return state

    def close(self) -> None:
        """The job ends: readers waiting get what is there, new polls read it by query."""
        self.stream.detach_pollers()
