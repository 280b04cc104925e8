"""The sections of the job config (workflows/contract/config.py: JobConfig holds them), each
setting stated once: its default, and the string under it as its one-line description."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from switchback.workflows.contract.config_names import (
    STRATEGIC_TOOLS,
    TACTICAL_TOOLS,
    WINDOW_FRACTION,
    refuse_old_names,
)


class _Strict(BaseModel):
    # a string right after a field is its description: the one line that
    # configs/defaults.yaml and docs/config-reference.md are generated from (operate/config_docs.py)
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class RetrySettings(_Strict):
    """Temporal's retry policy of an activity (durations in seconds, as every duration here)."""

    initial_interval_seconds: float = Field(1, gt=0)
    """The wait before the second attempt."""
    backoff_coefficient: float = Field(2, ge=1)
    """Each further wait, this many times the one before."""
    maximum_interval_seconds: float | None = Field(None, gt=0)
    """The longest wait between two attempts (null: 100 times the first)."""
    maximum_attempts: int = Field(3, ge=1)
    """Attempts in all, the first included."""

    @model_validator(mode="after")
    def _temporal_takes_it(self) -> RetrySettings:
        longest = self.maximum_interval_seconds
        if self.maximum_attempts > 1 and longest is not None \
                and longest < self.initial_interval_seconds:
            raise ValueError(f"maximum_interval_seconds ({longest}) is shorter than "
                             f"initial_interval_seconds ({self.initial_interval_seconds})")
        return self

    def longest_wait(self) -> float:
        return self.maximum_interval_seconds or 100 * self.initial_interval_seconds


def _kind_defaults(defaults: dict[str, Any]) -> BeforeValidator:
    """What a config or a carried state leaves out of one kind's retry is that kind's
    default, not RetrySettings' own."""
    return BeforeValidator(lambda v: {**defaults, **v} if isinstance(v, dict) else v)


_MODEL_RETRY = {"maximum_interval_seconds": 60, "maximum_attempts": 10}
_TOOL_RETRY = {"initial_interval_seconds": 2, "backoff_coefficient": 3}
_WORKSPACE_RETRY = {"maximum_interval_seconds": 20, "maximum_attempts": 8}
ModelRetry = Annotated[RetrySettings, _kind_defaults(_MODEL_RETRY)]
ToolRetry = Annotated[RetrySettings, _kind_defaults(_TOOL_RETRY)]
WorkspaceRetry = Annotated[RetrySettings, _kind_defaults(_WORKSPACE_RETRY)]


class LlmSettings(_Strict):
    """The model endpoint and how it is called."""

    endpoint: str = "default"
    """A model endpoint the operator declared in configs/endpoints.yaml, by name."""
    model: str = "gpt-4o-mini"
    """One of that endpoint's models."""
    base_url: str | None = None
    """A raw URL: refused unless the operator allows it; never sent a key it did not declare."""
    api_key_env: str | None = None
    """The variable holding the key for `base_url` (the same rule)."""
    temperature: float | None = 0.2
    """Sampling temperature (null: the endpoint's default)."""
    max_tokens: int | None = 4096
    """Tokens one answer may have (null: the endpoint's limit)."""
    timeout_seconds: float = Field(300, gt=0)
    """One model call, at most (a slow endpoint's own timeout raises it)."""
    heartbeat_timeout_seconds: float = Field(3, gt=0)
    """A worker that dies mid-call is noticed after this (it heartbeats every second)."""
    retry: ModelRetry = RetrySettings(**_MODEL_RETRY)
    """A model call on 429, 5xx and timeouts (an endpoint's Retry-After is kept to the
    longest wait)."""
    price_in_per_mtok: float = Field(0.15, ge=0)
    """USD per million prompt tokens, for the cost in `state` and `budget.max_cost_usd`."""
    price_out_per_mtok: float = Field(0.60, ge=0)
    """USD per million completion tokens."""
    local_calls_in_a_row: int = Field(0, ge=0)
    """Model calls in a row that may run as local activities (0: never; docs/operating.md)."""
    profile: str = Field("", max_length=100)
    """A model profile the worker has, by name (docs/profiles.md); "" the endpoint's; "none"."""

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        refuse_old_names({"llm": data})
        return data


class ToolSets(_Strict):
    """Tool names or globs: built-in, package and MCP (`<server>.<tool>`) tools."""

    workspace: list[str] = ["read_file", "write_file", "list_files", "search_files"]
    """The workspace tools, in every phase."""
    domain: list[str] = []
    """The job's own tools (tactical phases, react, plan steps); resolved at the job's start."""
    deferred: list[str] = []
    """Domain tools kept out of the prompt until tool_search finds them."""
    local: list[str] = ["read_file", "write_file", "list_files", "search_files",
                        "delete_file", "todo_write", "tool_search"]
    """Tools run as local activities in the workflow worker (the others: on task_queues.tools)."""
    timeout_seconds: float = Field(120, gt=0)
    """One attempt of a tool call (and of listing the tools at the start), at most."""
    retry: ToolRetry = RetrySettings(**_TOOL_RETRY)
    """A tool call; after the last attempt the job stops with output/error.json."""

    def for_phase(self, kind: str, tactical_workspace: list[str] | None = None) -> list[str]:
        """Strategic: workspace + STRATEGIC_TOOLS. Tactical: workspace (those of it in
        `tactical_workspace`, phase_settings', when given) + TACTICAL_TOOLS + domain (less
        the deferred ones, plus tool_search when there are deferred tools)."""
        if kind == "strategic":
            return list(dict.fromkeys(self.workspace + STRATEGIC_TOOLS))
        loaded = [t for t in self.domain if t not in self.deferred]
        search = ["tool_search"] if self.deferred else []
        files = self.workspace if tactical_workspace is None else [
            t for t in self.workspace if t in tactical_workspace]
        return list(dict.fromkeys(files + TACTICAL_TOOLS + search + loaded))

    def known(self) -> set[str]:
        return {*self.workspace, *STRATEGIC_TOOLS, *TACTICAL_TOOLS, *self.domain, "tool_search"}

    def of_the_task(self) -> set[str]:
        """The tools of the task (domain and deferred): calls of them are the job's work."""
        return {*self.domain, *self.deferred}

    def writes_files(self) -> bool:
        """Can the model write a workspace file (write_file among the workspace tools)?"""
        return "write_file" in self.workspace


class PhaseSettings(_Strict):
    """phase_alternation's (and nested's outer loop's): the gate on todos.yaml, the phase
    loops, the model's rewinds."""

    min_todos: int = Field(1, ge=1)
    """The fewest todos a plan may have."""
    max_todos: int = Field(20, ge=1)
    """The most todos a plan may have (a nested job: children per delegation)."""
    max_idle_phases: int = Field(3, ge=0)
    """Tactical phases in a row with no file but the plan written, no task tool called (0: off)."""
    max_rewinds: int = Field(5, ge=0)
    """More rewind phases than this: the job stops `stuck` (0: off)."""
    model_may_restore: bool = False
    """todo_rewind(issue, restore_phase=N) may put the files back (a person's rewind may)."""
    tactical_workspace: list[str] | None = None
    """A tactical phase's workspace tools, some of tools.workspace (null: all; []: none)."""

    @model_validator(mode="after")
    def _bounds(self) -> PhaseSettings:
        if self.min_todos > self.max_todos:
            raise ValueError(f"min_todos ({self.min_todos}) > max_todos ({self.max_todos})")
        return self


class Limits(_Strict):
    """Bounds on a job's steps and texts."""

    max_nudges: int = Field(3, ge=0)
    """Model turns without a tool call in a row, nudged; then the turn ends the phase or job."""
    max_steps_per_phase: int = Field(150, ge=1)
    """Model steps one phase may take."""
    max_phases: int = Field(200, ge=1)
    """Phases (attempts, stages) one job may have."""
    read_max_chars: int = Field(20_000, ge=100)
    """read_file answers are cut at this many characters."""
    max_file_bytes: int = Field(5_000_000, ge=1)
    """The largest write or document accepted."""
    instructions_max_chars: int = Field(6000, ge=0)
    """instructions.md in the system prompt (`{{instructions}}`), cut at this many characters."""


class ContextPolicy(_Strict):
    """How each model call's context is assembled (layers 4-5; layers 1-3 are never cut)."""

    enabled: bool = True
    """false: the whole conversation, nothing cleared or summarized (for comparison)."""
    keep_tool_results: int = Field(5, ge=0)
    """The last N tool results stay intact; older ones become a placeholder naming their file."""
    max_tool_result_chars: int = Field(6000, ge=200)
    """Longer tool results are cut; the full text is kept in tool_outputs/."""
    summarize_at_tokens: int = Field(80_000, ge=1000)
    """Older turns are folded into a summary above this many prompt tokens ..."""
    context_window: int = Field(128_000, ge=1000)
    """The model's context window, in tokens (... or above 60 % of it, if that is smaller)."""

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        refuse_old_names({"context": data})
        return data

    def threshold(self) -> int:
        return min(self.summarize_at_tokens, int(self.context_window * WINDOW_FRACTION))


class TaskQueues(_Strict):
    """Separate queues for model and tool activities (null: the job's own queue)."""

    model: str | None = None
    """The model calls' queue, e.g. switchback-model (workers with SWITCHBACK_WORKER_ROLE=model)."""
    tools: str | None = None
    """The tool calls' queue; a queue no worker polls is refused when the job starts."""
    schedule_to_start_seconds: float = Field(600, ge=0)
    """A call on a separate queue that no worker takes within this fails the job (0: wait)."""

    def start_timeout(self, queue: str | None) -> float | None:
        """Seconds an activity on `queue` may wait for a worker (None: no limit)."""
        return self.schedule_to_start_seconds or None if queue else None


class ContinueAsNewSettings(_Strict):
    """When a job continues as new (always at a phase start)."""

    every_phases: int = Field(0, ge=0)
    """Continue as new every N phases (0: only when Temporal suggests it)."""


class BudgetSettings(_Strict):
    """What a job may spend; at 100% a wrap-up phase records the state and the job ends."""

    max_tokens: int | None = Field(None, ge=1)
    """Prompt and completion tokens for the whole job (null: no limit)."""
    max_cost_usd: float | None = Field(None, gt=0)
    """Estimated USD for the whole job (null: no limit)."""


class BreakerSettings(_Strict):
    """The deterministic checks after every model step."""

    repetition_window: int = Field(5, ge=2)
    """The same call or near-identical text across this many steps trips the loop breaker."""
    exempt_tools: list[str] = []
    """Polling tools whose repetition is legitimate, e.g. [check_status]."""
    no_progress_steps: int = Field(15, ge=0)
    """No progress in this many steps: a checkpoint message (0: off)."""
    max_steps_per_job: int = Field(2000, ge=0)
    """Model steps one job may take (0: no limit)."""


class ApprovalSettings(_Strict):
    """Tool calls that wait for the `approve` update."""

    timeout_seconds: float = Field(3600, gt=0)
    """How long a call waits for an answer."""
    on_timeout: Literal["deny", "approve"] = "deny"
    """What nobody answering means."""


class WorkspaceSettings(_Strict):
    """Where the job's files live."""

    bucket: str = "switchback"
    """One of the operator's buckets (SWITCHBACK_WORKSPACE_BUCKETS)."""
    timeout_seconds: float = Field(30, gt=0)
    """One workspace operation, at most (a dead worker's is retried after this)."""
    retry: WorkspaceRetry = RetrySettings(**_WORKSPACE_RETRY)
    """A workspace operation (S3 trouble); after the last attempt the job fails."""


InnerStrategy = Literal["react", "phase_alternation", "plan_revise_execute"]


class PlanReviseExecuteSettings(_Strict):
    """plan -> evaluate -> revise ... -> execute step by step."""

    threshold: float = Field(0.7, ge=0, le=1)
    """The evaluation score (0..1) a plan needs before it runs."""
    max_rounds: int = Field(3, ge=1)
    """Plan/evaluate rounds; after the last, the best plan runs."""
    min_steps: int = Field(1, ge=1)
    """The fewest steps a plan may have."""
    max_steps: int = Field(12, ge=1)
    """The most steps a plan may have."""
    max_replans: int = Field(3, ge=0)
    """Failed steps that revise the rest of the plan; then the job ends `stuck`."""
    result_chars: int = Field(1500, ge=100)
    """Of each predecessor's result, shown to a step."""

    @model_validator(mode="after")
    def _bounds(self) -> PlanReviseExecuteSettings:
        if self.min_steps > self.max_steps:
            raise ValueError(f"min_steps ({self.min_steps}) > max_steps ({self.max_steps})")
        return self


class NestedSettings(_Strict):
    """An outer strategic loop whose todos run as child jobs."""

    inner_strategy: InnerStrategy = "react"
    """The children's strategy: react, phase_alternation or plan_revise_execute."""
    max_concurrent: int = Field(3, ge=1, le=50)
    """Children running at a time."""
    instructions_chars: int = Field(2000, ge=0)
    """Of the job's instructions.md, given to each child as context."""
    within_parent: bool = False
    """Set by a nested job on its children: work in <parent>/subjobs/<child>/."""


class AutoRoutes(_Strict):
    """The strategy each complexity class runs."""

    A: InnerStrategy | Literal["nested"] = "nested"
    """Complex: deep analysis and planning."""
    B: InnerStrategy | Literal["nested"] = "phase_alternation"
    """Complicated: coordinated phases."""
    C: InnerStrategy | Literal["nested"] = "react"
    """Routine: one conversation."""


class AutoSettings(_Strict):
    """One model call classifies the instructions (A/B/C); the class picks the strategy."""

    routes: AutoRoutes = AutoRoutes()
    """The strategy of each class."""


class CompletionCheck(_Strict):
    """A check of the deliverables' content, one of: `command`, a script of the job's config
    folder, run by the worker as `python <command> <a copy of the workspace>` (exit status 0
    passes; what it prints on failure is what the model is told); or `model: true`, one
    verification call to the job's endpoint with the task and the deliverables' contents
    (prompts/verify.md), which answers PASS or FAIL with its reasons."""

    command: str | None = Field(None, min_length=1, max_length=200)
    """A script of the job's config folder, run on a copy of the workspace (exit 0 passes)."""
    model: bool = False
    """true: one verification call (prompts/verify.md) answers PASS or FAIL."""
    timeout_seconds: float = Field(120, gt=0, le=1800)
    """The check, at most."""

    @model_validator(mode="after")
    def _one(self) -> CompletionCheck:
        if (self.command is None) == (not self.model):
            raise ValueError("completion.check: give either `command` or `model: true`")
        return self


class CompletionSettings(_Strict):
    """How a job's completion is verified (docs/completion.md). Every job: a completion
    whose deliverables (the job's `deliverables`, the model's plan's, job_complete's) are
    missing, empty or not written by this job is refused with what is missing, at most
    `max_refusals` times; then the job ends `stuck` with that list, never `completed`."""

    max_refusals: int = Field(default=3, ge=0, le=20)
    """job_complete refused this often while deliverables are missing; then the job ends stuck."""
    check: CompletionCheck | None = None
    """With every deliverable there, this must pass too: {command: check.py} or {model: true}."""


class FollowUpSettings(_Strict):
    """Follow-up instructions (the `instruct` update or signal): a job that completed a turn
    waits for the next instruction instead of ending (docs/cli.md, "instruct")."""

    wait_seconds: int = Field(0, ge=0, le=30 * 86400)
    """Seconds a completed turn waits for an instruction, then the job ends (0: at once)."""
    max_turns: int = Field(20, ge=1, le=1000)
    """Turns at most, the first included; an instruction beyond them is refused."""

