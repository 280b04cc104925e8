"""The job's live event stream: what `switchback follow` and the console read (docs/live.md).

A job hosts a Temporal Workflow Stream (`temporalio.contrib.workflow_streams`); every event
is published on the topic `events` as a plain JSON object. Each has:

    kind     what happened (KINDS below)
    call     the model call or tool call it belongs to ("" for job-level events)
    attempt  the activity attempt that produced it (1 for events the workflow publishes)
    at       when, ISO 8601 UTC (the workflow's time for its own events: rebuilt when a
             worker replays the job, it may differ by milliseconds; the offset names an event)

plus the fields of its kind (the models below, one per kind; unknown kinds and fields may be
added later: a consumer ignores what it does not know).

Retried model calls: a `model.start` for a call with a higher attempt than a consumer has
shown means that call's text so far is void (the attempt that wrote it failed); the new
attempt's `model.delta`s follow. `model.end` carries the call's whole reply text and is
authoritative: it replaces whatever the deltas built. So a retried attempt's partial text is
replaced, never shown twice.

Everything here is plain data: the workflow, the activities and clients import it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

TOPIC = "events"

# how much of a tool's arguments and result text an event carries (the rest is in the
# workspace's conversation record)
ARGUMENTS_CHARS = 300
RESULT_CHARS = 500
TEXT_CHARS = 4000  # a model.end's text; a model.delta carries at most what it batched


class Event(BaseModel):
    """What every event has."""

    model_config = ConfigDict(extra="allow")

    kind: str
    call: str = ""
    attempt: int = 1
    at: str = ""


class PhaseEvent(Event):
    kind: Literal["phase"] = "phase"
    phase: str = ""  # strategic, tactical, a strategy's stage
    number: int = 0
    title: str = ""


class TodoItem(BaseModel):
    text: str
    done: bool = False


class TodosEvent(Event):
    kind: Literal["todos"] = "todos"
    todos: list[TodoItem] = []


class ModelStart(Event):
    """A model call (attempt) begins; `call` is its key (`<conversation>.m<index>`)."""

    kind: Literal["model.start"] = "model.start"
    phase: int = 0


class ModelDelta(Event):
    """Text the model wrote since the last delta of this call and attempt."""

    kind: Literal["model.delta"] = "model.delta"
    text: str = ""


class ModelEnd(Event):
    """The call's reply: its whole text (at most TEXT_CHARS) and the tools it calls."""

    kind: Literal["model.end"] = "model.end"
    text: str = ""
    tool_calls: list[str] = []


class ToolCall(Event):
    """A tool call about to run; `call` is the tool call's id."""

    kind: Literal["tool.call"] = "tool.call"
    name: str = ""
    arguments: str = ""  # at most ARGUMENTS_CHARS


class ToolResult(Event):
    kind: Literal["tool.result"] = "tool.result"
    name: str = ""
    ok: bool = True
    text: str = ""  # at most RESULT_CHARS


class GuardEvent(Event):
    """A call refused before it ran (a guard of workflows/guards.py); `call`: the tool call."""

    kind: Literal["guard"] = "guard"
    name: str = ""
    message: str = ""


class BreakerEvent(Event):
    kind: Literal["breaker"] = "breaker"
    name: str = ""
    message: str = ""


class ApprovalWaiting(Event):
    kind: Literal["approval.waiting"] = "approval.waiting"
    name: str = ""
    arguments: str = ""


class ApprovalDecided(Event):
    kind: Literal["approval.decided"] = "approval.decided"
    name: str = ""
    approved: bool = False
    note: str = ""


class OutcomeUnknown(Event):
    """A tool call whose effect is not known (its attempt may or may not have acted)."""

    kind: Literal["outcome.unknown"] = "outcome.unknown"
    name: str = ""


class TurnEvent(Event):
    """A follow-up turn began (the `instruct` update)."""

    kind: Literal["turn"] = "turn"
    turn: int = 1
    instruction: str = ""


class EndEvent(Event):
    """The job ended (or its run: `status` continued is never sent; the stream goes on)."""

    kind: Literal["end"] = "end"
    status: str = ""
    summary: str = ""


KINDS: dict[str, type[Event]] = {m.model_fields["kind"].default: m for m in (
    PhaseEvent, TodosEvent, ModelStart, ModelDelta, ModelEnd, ToolCall, ToolResult,
    GuardEvent, BreakerEvent, ApprovalWaiting, ApprovalDecided, OutcomeUnknown, TurnEvent,
    EndEvent)}


def event(kind: str, *, call: str = "", attempt: int = 1, at: str = "",
          **fields: Any) -> dict[str, Any]:
    """An event as it is published: a plain JSON object (checked against its kind's model)."""
    model = KINDS.get(kind, Event)
    return model(kind=kind, call=call, attempt=attempt, at=at, **fields).model_dump(mode="json")


def parse(data: object) -> Event | None:
    """A received event as its kind's model; None for what is not an event object."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        return None
    try:
        return KINDS.get(data["kind"], Event).model_validate(data)
    except ValueError:
        return None


def clip(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, saying it was cut."""
    return text if len(text) <= limit else text[:max(0, limit - 1)] + "…"
