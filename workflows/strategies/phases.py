"""Phase alternation's state: a phase (its kind, variant, todos and counts), the snapshot a
continue-as-new carries, and a transition decided during a batch of tool calls
(workflows/strategies/phase_alternation.py; nested's outer loop uses them too)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from workflows.contract import Todo
from workflows.strategies import ritual
from workflows.strategies.base import PhaseRecord, Totals

Kind = Literal["strategic", "tactical"]
Variant = Literal["bootstrap", "transition", "rewind", "wrap_up", "work", "follow_up"]

TITLES = {"bootstrap": "Bootstrap: explore and plan", "transition": "Transition: review and plan",
          "rewind": "Rewind: reconsider the plan", "wrap_up": "Wrap-up: record the state of work",
          "follow_up": "Follow-up: plan the new instruction"}


class Phase(BaseModel):
    number: int
    kind: Kind
    variant: Variant
    title: str
    todos: list[Todo]
    issue: str = ""  # rewind phases: what went wrong
    previous: str = ""  # strategic phases: what the phase before did (ritual.digest)
    loaded: list[str] = []  # deferred tools tool_search loaded in this phase
    evidence: dict[int, list[str]] = {}  # todo id -> files it must change (predefined todos)
    # tool calls that changed a file besides the plan (ritual.PLANNING_FILES), and calls of a
    # tool of the task that wrote none (patch work-without-files)
    writes: int = 0
    changed: list[str] = []  # paths written in the phase (at most ritual.MAX_CHANGED)
    refusals: int = 0  # calls the ritual refused in the phase (ritual.REFUSALS)
    todo_calls: int = 0  # work calls since the current todo became current (ritual.work_calls)
    workless: list[int] = []  # todos whose todo_complete without a call was refused once
    steps: int = 0
    nudges: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class Snapshot(BaseModel):
    """The strategy's state at a phase start: what continue-as-new carries."""

    phase: Phase
    totals: Totals
    history: list[PhaseRecord]
    todos_completed: int
    final_status: Literal["completed", "budget_exhausted"]
    loops: ritual.Loops = ritual.Loops()


class Pending(BaseModel):
    """A transition decided during a batch of tool calls, carried out after it."""

    to: Literal["tactical", "strategic", "rewind"]
    title: str = ""
    todos: list[Todo] = []
    issue: str = ""
