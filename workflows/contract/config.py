"""The job config schema: `configs/<job>/config.yaml` over `configs/defaults.yaml`.

Each setting is stated here once: its default, and the string under it as its one-line
description; `configs/defaults.yaml` and docs/config-reference.md are generated from this
(`python -m operate.config_docs`). Validated with pydantic (`extra="forbid"`, so a misspelt
key is an error that names it). Loaded once per job by the `load_config` activity and
carried in workflow state: editing a config file never changes a running job.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from workflows.contract import layout


class _Strict(BaseModel):
    # a string right after a field is its description: the one line that
    # configs/defaults.yaml and docs/config-reference.md are generated from (operate/config_docs.py)
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


# Settings renamed for the 0.x baseline: configs and job state (continue-as-new carries the
# config; committed histories hold it) written with the earlier names still load. The loader
# renames each file's mapping before it merges them (a config's new name beats its base's old
# one); a mapping that sets both names of one setting is refused.
EARLIER_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("llm", "max_attempts"): ("llm", "retry", "maximum_attempts"),
    ("llm", "max_retry_interval_seconds"): ("llm", "retry", "maximum_interval_seconds"),
    ("retries", "tool_attempts"): ("tools", "retry", "maximum_attempts"),
    ("retries", "tool_initial_interval_seconds"): ("tools", "retry", "initial_interval_seconds"),
    ("retries", "tool_backoff"): ("tools", "retry", "backoff_coefficient"),
    ("retries", "tool_timeout_seconds"): ("tools", "timeout_seconds"),
    ("retries", "workspace_attempts"): ("workspace", "retry", "maximum_attempts"),
    ("retries", "workspace_timeout_seconds"): ("workspace", "timeout_seconds"),
    ("completion", "expect_lines"): ("small", "expect_lines"),
    ("completion", "plan_after_refusals"): ("small", "plan_after_refusals"),
    ("completion", "plans_name_deliverables"): ("small", "plans_name_deliverables"),
    # phase_alternation's own settings under its own key (0.x)
    ("breakers", "max_idle_phases"): ("phase_settings", "max_idle_phases"),
    ("breakers", "max_rewinds"): ("phase_settings", "max_rewinds"),
    ("rewind", "model_may_restore"): ("phase_settings", "model_may_restore"),
    # the nested strategy's mark on its children, under its own key
    ("workspace", "within_parent"): ("nested", "within_parent"),
}
# sections whose every setting moved: emptied by the moves, they go
MOVED_SECTIONS = {"retries": "the retry policies are llm.retry, tools.retry and "
                             "workspace.retry (docs/config-reference.md)",
                  "rewind": "the model's restores are phase_settings.model_may_restore"}


# Settings taken out of the job config (at the 0.x baseline and since): fixed rules of the
# engine, and a rerun's source, which `starter.py rerun` sets on the job it lays out
# (ResolvedConfig) (docs/configs.md, "Names before 0.x"). A config file that sets one is
# refused with what it became (activities/config_files.py); job state and histories that
# hold one still load, the value dropped.
RETIRED: dict[tuple[str, str], str] = {
    ("llm", "max_identical_failures"): "the same HTTP 500 three times in a row ends the retries",
    ("phase_settings", "archive_on_transition"): "every phase is archived",
    ("limits", "workspace_md_max_chars"): "workspace.md is shown up to 12,000 characters",
    ("limits", "max_output_chars"): "a model answer is cut at 200,000 characters",
    ("limits", "todo_completes_per_turn"): "one todo_complete counts per model turn",
    ("context", "clear_min_chars"): "tool results under 300 characters are never cleared",
    ("context", "window_fraction"): "a summary comes at 60 % of context_window at the latest",
    ("budget", "warn_at"): "the model is told at 80 % and 95 % of the budget",
    ("breakers", "similarity_threshold"): "texts 90 % alike count as the same",
    ("llm", "replay_from"): "set by `starter.py rerun` only, not by job input",
    ("llm", "replay_on_divergence"): "set by `starter.py rerun --stop-at-divergence`",
    ("", "job_type"): "nothing read it; the web UI shows the task's title",
    ("", "display_name"): "nothing read it; the web UI shows the task's title",
    ("llm", "local_call_below_seconds"):
        "a model call may run locally only after one that answered in under 2 s",
    ("tools", "search_results"): "a tool_search query loads at most 3 tools",
    ("context", "keep_recent_messages"): "a summary keeps the last 6 messages",
    ("budget", "wrap_up_steps"): "the wrap-up phase may take 12 model steps",
    ("tools", "strategic"): "a strategic phase's control tools are todo_complete, todo_write "
                            "and job_complete",
    ("tools", "tactical"): "a tactical phase's control tools are todo_complete and todo_rewind",
    ("limits", "max_tool_calls_per_step"):
        "the first 16 tool calls of a model turn run; the rest are refused",
}
# the control tools of phase_alternation's phases (tools.strategic and tools.tactical before)
STRATEGIC_TOOLS = ["todo_complete", "todo_write", "job_complete"]
TACTICAL_TOOLS = ["todo_complete", "todo_rewind"]
MAX_TOOL_CALLS_PER_STEP = 16  # limits.max_tool_calls_per_step before
WINDOW_FRACTION = 0.6  # context.window_fraction before 0.x


def retired(data: Any) -> list[str]:
    """The retired settings a raw config sets, each as `section.key: what it is now` (a
    top-level setting's section is "")."""
    if not isinstance(data, dict):
        return []
    return [f"{section}.{key}: no longer a setting ({now})".lstrip(".")
            for (section, key), now in RETIRED.items() if key in _section(data, section)]


def _section(data: dict[str, Any], section: str) -> dict[str, Any]:
    """`data`'s mapping `section` ("": data itself; {} when it is none)."""
    found = data.get(section) if section else data
    return found if isinstance(found, dict) else {}


def earlier_names(data: Any) -> Any:
    """A raw config (a mapping) with the earlier names moved to their places and the retired
    settings dropped; `retries`, emptied, goes. A config whose target sections are not
    mappings is left as it is, for validation to name what is wrong. Raises ValueError for a
    setting given under both names, and for a `retries` key no earlier version had."""
    if not isinstance(data, dict):
        return data
    if retired(data):
        data = {section: ({k: v for k, v in value.items() if (section, k) not in RETIRED}
                          if isinstance(value, dict) else value)
                for section, value in data.items() if ("", section) not in RETIRED}
    moves = [(section, key, place) for (section, key), place in EARLIER_NAMES.items()
             if isinstance(data.get(section), dict) and key in data[section]]
    if any(not _mapping_path(data, place[:-1]) for _, _, place in moves):
        return data
    out = dict(data)
    for section, key, place in moves:
        old = out[section]
        node = out
        for part in place[:-1]:
            node[part] = dict(node.get(part) or {})
            node = node[part]
        if place[-1] in node:
            raise ValueError(f"{section}.{key} and {'.'.join(place)} are the same setting "
                             f"({section}.{key} is its name before 0.x): give it once")
        node[place[-1]] = old[key]
        out[section] = {k: v for k, v in out[section].items() if k != key}
    for section, now in MOVED_SECTIONS.items():
        if section not in out:
            continue
        rest = out.pop(section)
        if rest != {}:  # (not a mapping, or a key no earlier version had)
            key = next(iter(rest), "") if isinstance(rest, dict) else ""
            raise ValueError(f"{section}{'.' if key else ''}{str(key)[:100]}: not a setting; "
                             f"{now}")
    return out


def _mapping_path(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Is each section along `path` in `data` a mapping, or absent?"""
    node: Any = data
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return True
        if not isinstance(node, dict):
            return False
    return True


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
    profile: Literal["", "none", "small"] = ""
    """A model profile (docs/profiles.md): "small", "none", or "" for the endpoint's own."""

    @model_validator(mode="before")
    @classmethod
    def _earlier_names(cls, data: Any) -> Any:  # (a model call's request, sent before)
        return earlier_names({"llm": data}).get("llm") if isinstance(data, dict) else data


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
    def _earlier_names(cls, data: Any) -> Any:  # (a model call's request, sent before)
        return earlier_names({"context": data}).get("context") if isinstance(data, dict) else data

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


class LinePattern(_Strict):
    """A line of `small.expect_lines` given by its shape, not its text: some line of the
    file (spaces at its ends aside) matches `glob` (`fnmatch` syntax, case-sensitive: `*`,
    `?`, `[A-Z]`, `[!#]`); `describe` says what such a line is, in the messages the model
    reads ("a sentence about apples"). A 1.5B model under react wrote its notes with their
    headings only and the gate, which knew only exact lines, took them (eval round 10)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    glob: str = Field(min_length=1, max_length=200)
    """The shape of the line (fnmatch syntax)."""
    describe: str = Field(min_length=1, max_length=200)
    """What such a line is, as the model is told."""


def line_text(line: str | LinePattern) -> str:
    """How an expected line is named to the model: the exact line quoted, or a pattern's
    description."""
    return repr(line.strip()) if isinstance(line, str) else f"a line that is {line.describe}"


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


class SmallProfileSettings(_Strict):
    """The `small` model profile's rules (llm.profile: small; docs/profiles.md): each
    deliverable file and the lines it must hold (a line equal to the text, spaces at its ends
    aside, or one that matches a `LinePattern`), and the rules built on them. A config that
    sets them without the profile is refused."""

    expect_lines: dict[str, list[str | LinePattern]] = {}
    """{path: [line, ...]}, each deliverable and the lines it must hold."""
    plan_after_refusals: int = Field(default=3, ge=0, le=50)
    """A strategic phase refused this often gets the workflow's plan (0: never)."""
    plans_name_deliverables: bool = False
    """A todo_write naming none of the files still short is refused."""

    @model_validator(mode="after")
    def _bounded(self) -> SmallProfileSettings:
        if len(self.expect_lines) > 50:
            raise ValueError("small.expect_lines: at most 50 files")
        for path, lines in self.expect_lines.items():
            if not layout.is_workspace_path(path):
                raise ValueError(f"small.expect_lines: {path!r} is not a relative path "
                                 "in the job's workspace")
            if len(lines) > 50 or any(isinstance(line, str) and len(line) > 500
                                      for line in lines):
                raise ValueError(f"small.expect_lines: {path!r}: at most 50 lines of "
                                 "500 characters")
        return self


class FollowUpSettings(_Strict):
    """Follow-up instructions (the `instruct` update or signal): a job that completed a turn
    waits for the next instruction instead of ending (docs/cli.md, "instruct")."""

    wait_seconds: int = Field(0, ge=0, le=30 * 86400)
    """Seconds a completed turn waits for an instruction, then the job ends (0: at once)."""
    max_turns: int = Field(20, ge=1, le=1000)
    """Turns at most, the first included; an instruction beyond them is refused."""


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
    small: SmallProfileSettings = SmallProfileSettings()

    @model_validator(mode="before")
    @classmethod
    def _earlier_names(cls, data: Any) -> Any:
        return earlier_names(data)

    def acts_only(self) -> bool:
        """No tool that writes a workspace file and no declared deliverable: the job's results
        are what its tools do (react's prompt, a refused claim's text)."""
        return not self.tools.writes_files() and not self.deliverables

    @model_validator(mode="after")
    def _tactical_workspace(self) -> JobConfig:
        """phase_settings.tactical_workspace names workspace tools: [] when the tactical work
        is done with the domain tools only and the workspace is the planner's notebook
        (BFCL's APIs: with the file tools beside them, the 1.5B model listed the workspace
        for the API's files)."""
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
    # set by `starter.py rerun` on the job it lays out: answer its model calls from this
    # job's recorded responses while the prompts are the same; where they differ, call the
    # model (`live`) or stop (`stop`)
    replay_from: str = ""
    replay_on_divergence: Literal["live", "stop"] = "live"

    @model_validator(mode="before")
    @classmethod
    def _rerun_source(cls, data: Any) -> Any:
        """A rerun's state carried from before 0.x named its source in `config.llm`."""
        config = data.get("config") if isinstance(data, dict) else None
        llm = config.get("llm") if isinstance(config, dict) else None
        if isinstance(llm, dict) and llm.get("replay_from") and not data.get("replay_from"):
            data = {**data, "replay_from": llm["replay_from"],
                    "replay_on_divergence": llm.get("replay_on_divergence") or "live"}
        return data
