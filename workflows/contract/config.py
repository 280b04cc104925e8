"""The job config schema: `configs/<job>/config.yaml` over `configs/defaults.yaml`.

Each setting is stated here once: its default, and the string under it as its one-line
description; `configs/defaults.yaml` and docs/config-reference.md are generated from this
(`python -m switchback.operate.config_docs`). Validated with pydantic (`extra="forbid"`, so a
misspelt
key is an error that names it). Loaded once per job by the `load_config` activity and
carried in workflow state: editing a config file never changes a running job.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from switchback.workflows.contract import layout
from switchback.workflows.contract.config_names import (
    MAX_TOOL_CALLS_PER_STEP,
    RENAMED,
    RETIRED,
    STRATEGIC_TOOLS,
    TACTICAL_TOOLS,
    WINDOW_FRACTION,
    refuse_old_names,
    renamed,
    retired,
)
from switchback.workflows.contract.settings import (
    ApprovalSettings,
    AutoRoutes,
    AutoSettings,
    BreakerSettings,
    BudgetSettings,
    CompletionCheck,
    CompletionSettings,
    ContextPolicy,
    ContinueAsNewSettings,
    FollowUpSettings,
    InnerStrategy,
    Limits,
    LlmSettings,
    ModelRetry,
    NestedSettings,
    PhaseSettings,
    PlanReviseExecuteSettings,
    RetrySettings,
    TaskQueues,
    ToolRetry,
    ToolSets,
    WorkspaceRetry,
    WorkspaceSettings,
    _Strict,
)

PROMPT_FILES: dict[str, tuple[str, str]] = {
    # name: (its file under the configs folder, what it is)
    "strategic": ("prompts/strategic.md", "phase_alternation: a strategic phase's system prompt."),
    "tactical": ("prompts/tactical.md", "phase_alternation: a tactical phase's system prompt."),
    "tactical_actions": ("prompts/tactical_actions.md", "phase_alternation: a tactical "
                         "phase's system prompt when it has no write_file (its results are "
                         "what its tools do)."),
    "kickoff": ("prompts/kickoff.md", "phase_alternation, nested: a phase's first message."),
    "nudge": ("prompts/nudge.md", "A phase's turn without a tool call."),
    "cut_off": ("prompts/cut_off.md", "A turn without a tool call, cut off at llm.max_tokens."),
    "summarization": ("prompts/summarization.md", "Folding older turns into a summary."),
    "react": ("prompts/react.md", "react: the system prompt."),
    "react_actions": ("prompts/react_actions.md", "react (and plan_revise_execute's wrap-up): "
                      "the system prompt of a job without write_file (its results are what "
                      "its tools do, not files)."),
    "react_kickoff": ("prompts/react_kickoff.md", "react: an attempt's first message."),
    "task_nudge": ("prompts/task_nudge.md",
                   "react, plan_revise_execute: a turn without a tool call."),
    "echo_nudge": ("prompts/echo_nudge.md",
                   "A turn whose text only echoes <tool_response> blocks."),
    "stage_kickoff": ("prompts/stage_kickoff.md",
                      "plan_revise_execute, auto: a stage's first message."),
    "plan": ("prompts/plan.md", "plan_revise_execute: plan, revise, replan."),
    "evaluate": ("prompts/evaluate.md", "plan_revise_execute: score a plan."),
    "step": ("prompts/step.md", "plan_revise_execute: one step."),
    "nested": ("prompts/nested.md", "nested: the outer loop's system prompt."),
    "subjob": ("prompts/subjob.md", "nested: a child job's instructions.md."),
    "classify": ("prompts/classify.md", "auto: the complexity matrix."),
    "verify": ("prompts/verify.md", "completion.check {model: true}: the verification call."),
    "strategic_todos": ("prompts/strategic_todos.yaml",
                        "phase_alternation: the strategic phases' predefined todos."),
    "nested_todos": ("prompts/nested_todos.yaml", "nested: the outer loop's predefined todos."),
}


def prompt_file(prompts: dict[str, str], name: str) -> str:
    """The file of prompt `name`: the config's own (`prompts`), else the default."""
    return prompts.get(name) or PROMPT_FILES[name][0]


class JobConfig(_Strict):
    """A job's config: `configs/<job>/config.yaml` (or an inline object) over its `extends`
    chain, down to `configs/defaults.yaml`."""

    extends: str | None = None
    """The config this one builds on (an inline config: defaults)."""
    strategy: str = "phase_alternation"
    """phase_alternation, react, plan_revise_execute, nested or auto (docs/strategies.md)."""
    llm: LlmSettings = LlmSettings()
    tools: ToolSets = ToolSets()
    phase_settings: PhaseSettings = PhaseSettings()
    limits: Limits = Limits()
    prompts: dict[str, str] = {}
    """Prompt files in place of the defaults, by name: {react: my.md} (docs/config-reference.md)."""
    workspace: WorkspaceSettings = WorkspaceSettings()
    documents: list[str] = []
    """Files placed under documents/, relative to the job's config folder."""
    approval_required: list[str] = []
    """Tools whose calls wait for the `approve` update, e.g. [delete_file]."""
    approvals: ApprovalSettings = ApprovalSettings()
    deliverables: list[str] = []
    """Paths or globs the job must write (present, not empty, written by the job)."""
    budget: BudgetSettings = BudgetSettings()
    breakers: BreakerSettings = BreakerSettings()
    completion: CompletionSettings = CompletionSettings()
    search_attributes: bool = True
    """Upsert SwitchbackPhase & co. (docs/ui.md); false: the memo only."""
    context: ContextPolicy = ContextPolicy()
    continue_as_new: ContinueAsNewSettings = ContinueAsNewSettings()
    task_queues: TaskQueues = TaskQueues()
    plan_revise_execute: PlanReviseExecuteSettings = PlanReviseExecuteSettings()
    nested: NestedSettings = NestedSettings()
    auto: AutoSettings = AutoSettings()
    follow_up: FollowUpSettings = FollowUpSettings()
    live_token_seconds: float = Field(0.0, ge=0, le=60)
    """Stream the model's text to the live stream, a batch this often (0: off; docs/live.md)."""

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        return refuse_old_names(data)

    def acts_only(self) -> bool:
        """No tool that writes a workspace file and no declared deliverable: the job's results
        are what its tools do (react's prompt, a refused claim's text)."""
        return not self.tools.writes_files() and not self.deliverables

    @model_validator(mode="after")
    def _tactical_workspace(self) -> JobConfig:
        """phase_settings.tactical_workspace names workspace tools: [] when the tactical work
        is done with the domain tools only and the workspace is the planner's notebook (a
        job acting on an API's own files, which the workspace's file tools would confuse)."""
        extra = [t for t in self.phase_settings.tactical_workspace or []
                 if t not in self.tools.workspace]
        if extra:
            raise ValueError(f"phase_settings.tactical_workspace: {', '.join(extra)} not among "
                             "tools.workspace")
        return self

    @model_validator(mode="after")
    def _prompts(self) -> JobConfig:
        for name, path in self.prompts.items():
            if name not in PROMPT_FILES:
                raise ValueError(f"prompts: unknown prompt {name[:100]!r} (known: "
                                 f"{', '.join(PROMPT_FILES)})")
            if not isinstance(path, str) or not 0 < len(path) <= 200:
                raise ValueError(f"prompts.{name}: a file path of at most 200 characters")
        return self

    @model_validator(mode="after")
    def _live(self) -> JobConfig:
        if 0 < self.live_token_seconds < 0.2:
            raise ValueError("live_token_seconds: 0 (off) or at least 0.2 (a batch is a signal "
                             "in the job's history)")
        return self

    @model_validator(mode="after")
    def _deliverables(self) -> JobConfig:
        problem = layout.deliverables_problem(self.deliverables)
        if problem:
            raise ValueError(f"deliverables: {problem}")
        return self


class StrategicTodo(_Strict):
    """A predefined todo with the files it must change before it counts as done."""

    content: str
    evidence: list[str] = []  # workspace paths that must have changed in the phase


class StrategicTodos(_Strict):
    """The predefined todos of the strategic phases; `{{min_todos}}`, `{{max_todos}}` and
    `{{archive}}` (the file of the phase before) are filled in when a phase starts."""

    bootstrap: list[str | StrategicTodo]
    transition: list[str | StrategicTodo]
    rewind: list[str | StrategicTodo]
    wrap_up: list[str | StrategicTodo]


class ResolvedConfig(BaseModel):
    """What `load_config` returns: the merged config plus the texts it points at."""

    name: str
    config: JobConfig
    prompts: dict[str, str]  # strategic, tactical, kickoff, nudge, summarization
    strategic_todos: StrategicTodos
    instructions: str | None = None  # the job folder's instructions.md, if any
    documents: list[str] = []  # the config's default documents (paths in `folder`)
    folder: str | None = None  # the job's config folder under configs/ (None: inline only)
    # set by `list_tools` at the job's start: the S3 key of the job's tool record (the
    # schemas the model sees); `config.tools` & co. then hold the names the model calls
    tool_record: str = ""
    # the config's tool entries (names and globs) as `list_tools` resolved them at the start
    # (a follow-up instruction's tools are listed with them again; [] before this was kept)
    tool_entries: list[str] = []
    source: str | dict[str, Any] | None = None  # the config as the job named it (children)
    nested_todos: StrategicTodos | None = None  # the nested outer loop's predefined todos
    # set by the worker's `load_config`: its payloads are encrypted (SWITCHBACK_CODEC_KEYS).
    # Search attributes never are, so the job then keeps free text (todo, error) out of them
    payloads_encrypted: bool = False
    # set by the worker's `load_config`: the workers of the job's queue run call_model too
    # (SWITCHBACK_WORKER_ROLE all, no separate model queue, SWITCHBACK_LOCAL_MODEL_CALLS not
    # 0), so a fast endpoint's calls may run as local activities (workflows/model_steps.py)
    model_calls_local: bool = False
    # set by the worker's `load_config`: the live stream keeps this many newest events
    # (SWITCHBACK_LIVE_RETAIN; workflows/live.py)
    live_retain: int = 1000
    # set by `starter.py rerun` on the job it lays out: answer its model calls from this
    # job's recorded responses while the prompts are the same; where they differ, call the
    # model (`live`) or stop (`stop`)
    replay_from: str = ""
    replay_on_divergence: Literal["live", "stop"] = "live"


__all__ = [
    "ApprovalSettings",
    "AutoRoutes",
    "AutoSettings",
    "BreakerSettings",
    "BudgetSettings",
    "CompletionCheck",
    "CompletionSettings",
    "ContextPolicy",
    "ContinueAsNewSettings",
    "FollowUpSettings",
    "InnerStrategy",
    "JobConfig",
    "Limits",
    "LlmSettings",
    "MAX_TOOL_CALLS_PER_STEP",
    "ModelRetry",
    "NestedSettings",
    "PhaseSettings",
    "PlanReviseExecuteSettings",
    "RENAMED",
    "RETIRED",
    "ResolvedConfig",
    "RetrySettings",
    "STRATEGIC_TOOLS",
    "StrategicTodo",
    "StrategicTodos",
    "TACTICAL_TOOLS",
    "TaskQueues",
    "ToolRetry",
    "ToolSets",
    "WINDOW_FRACTION",
    "WorkspaceRetry",
    "WorkspaceSettings",
    "PROMPT_FILES",
    "prompt_file",
    "refuse_old_names",
    "renamed",
    "retired",
]
