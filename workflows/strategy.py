"""The Strategy seam: a strategy decides the next step; the orchestrator carries it out.

The orchestrator (workflows/agent_job.py) knows how to call the model, run a tool
and end the job. A strategy knows *what* to do next, from its state and the last
result: ask the model (`CallModel`), run the tool calls the model asked for
(`ExecuteTools`), finish (`Complete`) or fail (`ReportError`). Phase alternation
(workflows/phase_alternation.py) is the first strategy; others plug in here
without touching the orchestrator loop.

Strategies run inside the workflow: they must be deterministic and do I/O only
through the `Effects` the orchestrator hands them (activities).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Protocol

from workflows.types import JobResult, ModelReply, ToolCallInfo, ToolOutcome


@dataclass
class CallModel:
    conversation: str  # a new key starts an empty conversation
    system_prompt: str  # sent with the first call of a conversation
    todo_block: str
    tools: list[str]
    user_messages: list[str] = field(default_factory=list)  # appended before the call
    label: str = ""


@dataclass
class PlannedCall:
    call: ToolCallInfo
    refusal: str | None = None  # set: never executed, the model gets this error
    refusal_code: str = "tool_refused"


@dataclass
class ExecuteTools:
    calls: list[PlannedCall]


@dataclass
class Complete:
    result: JobResult


@dataclass
class ReportError:
    what: str  # one line a person can act on
    code: str = "job_failed"


NextStep = CallModel | ExecuteTools | Complete | ReportError


class Effects(Protocol):
    """The side effects a strategy may ask for; each is an activity."""

    async def read_memory(self) -> str: ...
    async def load_todos(self, min_todos: int, max_todos: int): ...  # -> LoadTodosResult
    async def archive_phase(self, phase: int, record: dict) -> None: ...
    async def write_output(self, path: str, data: dict) -> None: ...


class Strategy(ABC):
    @abstractmethod
    async def begin(self) -> NextStep: ...

    @abstractmethod
    async def after_model(self, reply: ModelReply) -> NextStep: ...

    @abstractmethod
    def owns_tool(self, name: str) -> bool:
        """True for tools the strategy carries out itself (no activity)."""

    @abstractmethod
    async def run_own_tool(self, call: ToolCallInfo) -> ToolOutcome: ...

    def batch_closed(self) -> bool:
        """True when the remaining calls of the current batch must be skipped."""
        return False

    @abstractmethod
    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep: ...

    @abstractmethod
    async def interrupt(self, what: str, reason: str, status: str = "stuck") -> NextStep:
        """Leave the current step from outside the model's turn: 'rewind', 'wrap_up',
        'finish' (end with `status`) or 'cancel'. Archives what was done first."""

    @abstractmethod
    def progress(self) -> int:
        """A counter that grows when the job makes progress (todos completed)."""
