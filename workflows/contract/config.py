"""The job config schema: `configs/defaults.yaml` + `configs/<job>/config.yaml`.

Validated with pydantic (`extra="forbid"`, so a misspelt key is an error that names
it). Loaded once per job by the `load_config` activity and carried in workflow
state: editing a config file never changes a running job.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.contract import layout


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LlmSettings(_Strict):
    endpoint: str = "default"  # a name the operator declared (activities/model/endpoints.py)
    model: str = "gpt-4o-mini"  # one of the endpoint's models
    # raw endpoint settings: refused from job input unless the operator allows them, and
    # never given a key for a URL the operator did not declare (endpoints.py)
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = 0.2
    max_tokens: int | None = 4096
    timeout_seconds: float = Field(300, gt=0)
    heartbeat_timeout_seconds: float = Field(3, gt=0)
    max_attempts: int = Field(10, ge=1)
    max_retry_interval_seconds: float = Field(60, gt=0)
    # HTTP 500 to the identical request this many times in a row: the request fails, not
    # the endpoint (llama-server answers a history it cannot parse that way): no more retries
    max_identical_failures: int = Field(3, ge=1)
    replay_from: str | None = None  # rerun: answer from this job's recorded responses ...
    replay_on_divergence: Literal["live", "stop"] = "live"  # ... until the prompts differ
    price_in_per_mtok: float = Field(0.15, ge=0)  # USD per million prompt tokens (estimates)
    price_out_per_mtok: float = Field(0.60, ge=0)
    # opt-in: a fast endpoint's calls run as local activities (no activity task, no workflow
    # task of their own) while the call before took under `local_call_below_seconds`, at
    # most `local_calls_in_a_row` in a row (0, the default: never); the next call goes
    # through the server, which bounds how long the job's progress, queries and signals wait
    # (workflows/model_steps.py, docs/operating.md)
    local_call_below_seconds: float = Field(2.0, ge=0)
    local_calls_in_a_row: int = Field(0, ge=0)
    # a model profile: the rules one model family needs, opted into ("small": the rules that
    # keep a small local model to the ritual, docs/profiles.md; "none": no profile). "": the
    # endpoint's (configs/endpoints.yaml `profile:`), else none
    profile: Literal["", "none", "small"] = ""


class ToolSets(_Strict):
    workspace: list[str] = ["read_file", "write_file", "list_files", "search_files"]
    strategic: list[str] = ["todo_complete", "todo_write", "job_complete"]
    tactical: list[str] = ["todo_complete", "todo_rewind"]
    domain: list[str] = []
    deferred: list[str] = []  # domain tools not sent until tool_search finds them
    search_results: int = Field(3, ge=1)  # K: tools tool_search adds per query
    # run as local activities in the workflow's worker (short workspace operations whose
    # retry and timeout rules fit); the others are activities on task_queues.tools
    local: list[str] = ["read_file", "write_file", "list_files", "search_files",
                        "delete_file", "todo_write", "tool_search"]

    def for_phase(self, kind: str) -> list[str]:
        """Strategic: workspace + strategic. Tactical: workspace + tactical + domain
        (less the deferred ones, plus tool_search when there are deferred tools)."""
        if kind == "strategic":
            return list(dict.fromkeys(self.workspace + self.strategic))
        loaded = [t for t in self.domain if t not in self.deferred]
        search = ["tool_search"] if self.deferred else []
        return list(dict.fromkeys(self.workspace + self.tactical + search + loaded))

    def known(self) -> set[str]:
        return {*self.workspace, *self.strategic, *self.tactical, *self.domain, "tool_search"}


class PhaseSettings(_Strict):
    min_todos: int = Field(1, ge=1)
    max_todos: int = Field(20, ge=1)
    archive_on_transition: bool = True

    @model_validator(mode="after")
    def _bounds(self) -> PhaseSettings:
        if self.min_todos > self.max_todos:
            raise ValueError(f"min_todos ({self.min_todos}) > max_todos ({self.max_todos})")
        return self


class Limits(_Strict):
    max_nudges: int = Field(3, ge=0)  # model turns without a tool call, in a row
    max_steps_per_phase: int = Field(150, ge=1)
    max_phases: int = Field(200, ge=1)
    max_tool_calls_per_step: int = Field(16, ge=1)
    read_max_chars: int = Field(20_000, ge=100)  # read_file answers longer than this are cut
    max_file_bytes: int = Field(5_000_000, ge=1)  # largest write / document accepted
    workspace_md_max_chars: int = Field(12_000, ge=100)  # workspace.md in the system prompt
    # a model answer's text and each tool call's arguments: longer text is cut, longer
    # arguments are refused with a tool error (never parsed, never sent back to the model)
    max_output_chars: int = Field(200_000, ge=1000)
    # instructions.md in the system prompt (`{{instructions}}`), cut at this many characters
    instructions_max_chars: int = Field(6000, ge=0)
    # todo_complete calls that take effect in one model turn (0: any number, as jobs from
    # before #17); the others are refused: the work of a todo comes before its completion
    todo_completes_per_turn: int = Field(0, ge=0)


class ContextPolicy(_Strict):
    """How each model call's context is assembled (layers 4-5; layers 1-3 are never cut)."""

    enabled: bool = True  # false: the whole conversation, nothing cleared or summarized
    keep_tool_results: int = Field(5, ge=0)  # the last N tool results stay intact
    clear_min_chars: int = Field(300, ge=0)  # shorter results are never cleared
    max_tool_result_chars: int = Field(6000, ge=200)  # longer ones are cut, full text kept
    summarize_at_tokens: int = Field(80_000, ge=1000)
    context_window: int = Field(128_000, ge=1000)  # the model's window
    window_fraction: float = Field(0.6, gt=0, le=1)  # threshold <= this share of the window
    keep_recent_messages: int = Field(6, ge=2)  # raw messages kept after a summary

    def threshold(self) -> int:
        return min(self.summarize_at_tokens, int(self.context_window * self.window_fraction))


class TaskQueues(_Strict):
    """Separate queues for model and tool activities (None: the job's own queue).

    `load_config` refuses a queue no worker polls; an activity sent to a separate queue
    that no worker starts within `schedule_to_start_seconds` fails the job (0: wait)."""

    model: str | None = None
    tools: str | None = None
    schedule_to_start_seconds: float = Field(600, ge=0)

    def start_timeout(self, queue: str | None) -> float | None:
        """Seconds an activity on `queue` may wait for a worker (None: no limit)."""
        return self.schedule_to_start_seconds or None if queue else None


class ContinueAsNewSettings(_Strict):
    every_phases: int = Field(0, ge=0)  # 0: only when Temporal suggests it


class BudgetSettings(_Strict):
    max_tokens: int | None = Field(None, ge=1)  # prompt + completion tokens, whole job
    max_cost_usd: float | None = Field(None, gt=0)
    warn_at: list[float] = [0.8, 0.95]
    wrap_up_steps: int = Field(12, ge=1)  # model steps the final wrap-up phase may take


class BreakerSettings(_Strict):
    repetition_window: int = Field(5, ge=2)
    similarity_threshold: float = Field(0.9, gt=0, le=1)
    exempt_tools: list[str] = []  # polling tools whose repetition is legitimate
    no_progress_steps: int = Field(15, ge=0)  # 0: off
    max_steps_per_job: int = Field(2000, ge=0)  # 0: off
    # across phases (phase_alternation); 0: off, as for jobs from before #17 whose carried
    # config lacks the keys (configs/defaults.yaml turns them on)
    max_idle_phases: int = Field(0, ge=0)  # tactical phases in a row that changed no file
    max_rewinds: int = Field(0, ge=0)  # rewind phases in a job


class ApprovalSettings(_Strict):
    timeout_seconds: float = Field(3600, gt=0)
    on_timeout: Literal["deny", "approve"] = "deny"


class RewindSettings(_Strict):
    # todo_rewind(issue, restore_phase): the model may put the workspace back as it was at
    # the start of an earlier phase (a person's `rewind` signal always may)
    model_may_restore: bool = False


class Retries(_Strict):
    tool_attempts: int = Field(3, ge=1)
    tool_initial_interval_seconds: float = Field(2, gt=0)
    tool_backoff: float = Field(3, ge=1)
    tool_timeout_seconds: float = Field(120, gt=0)
    workspace_attempts: int = Field(8, ge=1)
    workspace_timeout_seconds: float = Field(30, gt=0)  # a dead worker's call is retried after


class Prompts(_Strict):
    """Paths relative to the configs directory."""

    strategic: str = "prompts/strategic.md"
    tactical: str = "prompts/tactical.md"
    kickoff: str = "prompts/kickoff.md"
    nudge: str = "prompts/nudge.md"
    cut_off: str = "prompts/cut_off.md"  # a turn without a tool call cut at max_tokens
    summarization: str = "prompts/summarization.md"
    react: str = "prompts/react.md"  # the react strategy's system prompt
    react_kickoff: str = "prompts/react_kickoff.md"
    task_nudge: str = "prompts/task_nudge.md"  # react, plan_revise_execute: a turn w/o tools
    echo_nudge: str = "prompts/echo_nudge.md"  # a turn that only echoes <tool_response> text
    stage_kickoff: str = "prompts/stage_kickoff.md"  # first message of a stage's conversation
    plan: str = "prompts/plan.md"  # plan_revise_execute: plan, revise, replan
    evaluate: str = "prompts/evaluate.md"
    step: str = "prompts/step.md"
    nested: str = "prompts/nested.md"  # nested: the outer loop's system prompt
    subjob: str = "prompts/subjob.md"  # nested: a child job's instructions.md
    classify: str = "prompts/classify.md"  # auto: the complexity matrix
    verify: str = "prompts/verify.md"  # completion.check model: the verification call
    strategic_todos: str = "prompts/strategic_todos.yaml"
    nested_todos: str = "prompts/nested_todos.yaml"  # nested: the outer loop's todos


class WorkspaceSettings(_Strict):
    bucket: str = "switchback"
    # work in <parent id>/subjobs/<job id>/ of the parent job's workspace: set by a `nested`
    # job for its children; a job without a parent job is refused
    within_parent: bool = False


InnerStrategy = Literal["react", "phase_alternation", "plan_revise_execute"]


class PlanReviseExecuteSettings(_Strict):
    threshold: float = Field(0.7, ge=0, le=1)  # the evaluation score a plan needs to run
    max_rounds: int = Field(3, ge=1)  # plan -> evaluate rounds; then the best plan runs
    min_steps: int = Field(1, ge=1)
    max_steps: int = Field(12, ge=1)
    max_replans: int = Field(3, ge=0)  # failed steps that revise the rest; then `stuck`
    result_chars: int = Field(1500, ge=100)  # of each predecessor's result in a step's prompt

    @model_validator(mode="after")
    def _bounds(self) -> PlanReviseExecuteSettings:
        if self.min_steps > self.max_steps:
            raise ValueError(f"min_steps ({self.min_steps}) > max_steps ({self.max_steps})")
        return self


class NestedSettings(_Strict):
    """Children per delegation phase: `phase_settings.min_todos`-`max_todos`."""

    inner_strategy: InnerStrategy = "react"  # the children's strategy
    max_concurrent: int = Field(3, ge=1, le=50)  # children running at a time
    instructions_chars: int = Field(2000, ge=0)  # of the job's instructions a child is given


class AutoRoutes(_Strict):
    """The strategy each complexity class runs (seed: strategic-planning-formalisms.md)."""

    A: InnerStrategy | Literal["nested"] = "nested"  # complex: deep analysis, planning
    B: InnerStrategy | Literal["nested"] = "phase_alternation"  # complicated: coordination
    C: InnerStrategy | Literal["nested"] = "react"  # routine


class AutoSettings(_Strict):
    routes: AutoRoutes = AutoRoutes()


class LinePattern(_Strict):
    """A line of `completion.expect_lines` given by its shape, not its text: some line of the
    file (spaces at its ends aside) matches `glob` (`fnmatch` syntax, case-sensitive: `*`,
    `?`, `[A-Z]`, `[!#]`); `describe` says what such a line is, in the messages the model
    reads ("a sentence about apples"). A 1.5B model under react wrote its notes with their
    headings only and the gate, which knew only exact lines, took them (eval round 10)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    glob: str = Field(min_length=1, max_length=200)
    describe: str = Field(min_length=1, max_length=200)


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
    model: bool = False
    timeout_seconds: float = Field(120, gt=0, le=1800)

    @model_validator(mode="after")
    def _one(self) -> CompletionCheck:
        if (self.command is None) == (not self.model):
            raise ValueError("completion.check: give either `command` or `model: true`")
        return self


class CompletionSettings(_Strict):
    """How a job's completion is verified (docs/completion.md). Every job: a completion
    whose deliverables (the job's `deliverables`, the model's plan's, job_complete's) are
    missing, empty or not written by this job is refused with what is missing, at most
    `max_refusals` times; then the job ends `stuck` with that list, never `completed`.

    The rest is the `small` model profile's (llm.profile: small): each deliverable file and
    the lines it must hold (a line equal to the text, spaces at its ends aside, or one that
    matches a `LinePattern`), and the rules built on them."""

    max_refusals: int = Field(default=3, ge=0, le=20)
    check: CompletionCheck | None = None  # with every deliverable there, this must pass too
    expect_lines: dict[str, list[str | LinePattern]] = {}
    # phase_alternation (and nested): a strategic phase whose calls were refused this many
    # times (a repeated plan, a write of another file than its todo asks for, a rejected
    # transition, ...) ends with the workflow's own plan: one todo per file of expect_lines
    # that still lacks its lines (0: never). The 1.5B model, refused, sent the same call
    # again until the loop breaker stopped the job (7 of 9 failed runs in eval round 11)
    plan_after_refusals: int = Field(default=3, ge=0, le=50)
    # phase_alternation (and nested): a todo_write none of whose todos names a file of
    # expect_lines that still lacks its lines is refused, showing the plan of those files.
    # For a job whose every phase writes deliverables (a long job's first phases may only
    # read and plan: leave it off). The 1.5B model's bootstrap planned twenty todos such as
    # "Read the workspace" and never planned a deliverable (eval rounds 11 and 13)
    plans_name_deliverables: bool = False

    @model_validator(mode="after")
    def _bounded(self) -> CompletionSettings:
        if len(self.expect_lines) > 50:
            raise ValueError("completion.expect_lines: at most 50 files")
        for path, lines in self.expect_lines.items():
            if not layout.is_workspace_path(path):
                raise ValueError(f"completion.expect_lines: {path!r} is not a relative path "
                                 "in the job's workspace")
            if len(lines) > 50 or any(isinstance(line, str) and len(line) > 500
                                      for line in lines):
                raise ValueError(f"completion.expect_lines: {path!r}: at most 50 lines of "
                                 "500 characters")
        return self


class JobConfig(_Strict):
    extends: str | None = None
    job_type: str = "generic"
    display_name: str = ""
    # a name of workflows/strategies' registry: phase_alternation | react |
    # plan_revise_execute | nested | auto
    strategy: str = "phase_alternation"
    llm: LlmSettings = LlmSettings()
    tools: ToolSets = ToolSets()
    phase_settings: PhaseSettings = PhaseSettings()
    limits: Limits = Limits()
    retries: Retries = Retries()
    prompts: Prompts = Prompts()
    workspace: WorkspaceSettings = WorkspaceSettings()
    documents: list[str] = []  # default documents, relative to the job's config folder
    approval_required: list[str] = []  # tools that wait for the `approve` update
    approvals: ApprovalSettings = ApprovalSettings()
    # what the job must deliver: workspace paths or globs (`notes/*.md`); the job is
    # `completed` only when each exists, is not empty and was written by this job
    deliverables: list[str] = []
    rewind: RewindSettings = RewindSettings()

    @model_validator(mode="after")
    def _deliverables(self) -> JobConfig:
        problem = layout.deliverables_problem(self.deliverables)
        if problem:
            raise ValueError(f"deliverables: {problem}")
        return self
    budget: BudgetSettings = BudgetSettings()
    breakers: BreakerSettings = BreakerSettings()
    completion: CompletionSettings = CompletionSettings()
    search_attributes: bool = True  # upsert SwitchbackPhase & co. (registered on the server)
    context: ContextPolicy = ContextPolicy()
    continue_as_new: ContinueAsNewSettings = ContinueAsNewSettings()
    task_queues: TaskQueues = TaskQueues()
    plan_revise_execute: PlanReviseExecuteSettings = PlanReviseExecuteSettings()
    nested: NestedSettings = NestedSettings()
    auto: AutoSettings = AutoSettings()


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
    source: str | dict[str, Any] | None = None  # the config as the job named it (children)
    nested_todos: StrategicTodos | None = None  # the nested outer loop's predefined todos
    # set by the worker's `load_config`: its payloads are encrypted (SWITCHBACK_CODEC_KEYS).
    # Search attributes never are, so the job then keeps free text (todo, error) out of them
    payloads_encrypted: bool = False
    # set by the worker's `load_config`: the workers of the job's queue run call_model too
    # (SWITCHBACK_WORKER_ROLE all, no separate model queue, SWITCHBACK_LOCAL_MODEL_CALLS not
    # 0), so a fast endpoint's calls may run as local activities (llm.local_call_below_seconds)
    model_calls_local: bool = False
