"""The input and result of every activity: what crosses the workflow/activity boundary.

Pydantic models carried by the pydantic data converter; no live objects, no
credentials. Fields are added with defaults so that old histories still decode.

History stays small by design: model requests carry a conversation *reference*
(job, conversation key, length) and the few messages the workflow itself made;
model replies carry tool-call *summaries*; tool outcomes carry a short summary.
Full messages live in the workspace store (activities/storage/conversations.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from switchback.workflows.contract.config import ContextPolicy, LlmSettings, ResolvedConfig
from switchback.workflows.contract.job import DocumentSpec


class WorkspaceRef(BaseModel):
    bucket: str
    # the job's prefix in the bucket: its job id, or `<parent id>/subjobs/<child id>` for a
    # child of a `nested` job (layout.subjob_prefix; the worker's guard checks the parent)
    job_id: str
    # the job's first run id: the owner of the prefix the worker's guard checks ("": no check)
    run: str = ""
    # the phase of the latest snapshot the workflow took (0: none known). A write that
    # replaces a version that snapshot names keeps it first (activities/storage/
    # kept_versions.py); with 0 every replaced version is kept
    snapshot: int = 0


# -- config and workspace --------------------------------------------------------------


class LoadConfigRequest(BaseModel):
    config: str | dict[str, Any]


class CreateWorkspaceRequest(BaseModel):
    workspace: WorkspaceRef
    instructions: str
    documents: list[DocumentSpec]
    max_file_bytes: int
    config_folder: str | None = None  # the job's config folder under configs/ (document paths)


class CreateWorkspaceResult(BaseModel):
    files: list[str]


class ReadMemoryRequest(BaseModel):
    workspace: WorkspaceRef
    max_chars: int
    path: str = ""  # "": workspace.md (a stub when missing); else that file ("" when missing)


class TodoSet(BaseModel):
    """Todos a new plan must not repeat: the predefined strategic ones, an earlier phase's."""

    label: str  # e.g. "the predefined bootstrap todos", "phase 2's todos"
    todos: list[str]
    unnumbered: bool = False  # a todo's list marker ("4.", "-", "Step 2:") is not its text


class LoadTodosRequest(BaseModel):
    workspace: WorkspaceRef
    min_todos: int
    max_todos: int
    # set: todos.yaml must have been written by todo_write in this conversation (the phase),
    # not left over from an earlier phase ("": no check, jobs from before the check)
    written_in: str = ""
    avoid: list[TodoSet] = []  # a plan that repeats one of these is rejected


class CheckFilesRequest(BaseModel):
    """Input of `check_files`: which of `paths` changed since `phase` began, and which
    `deliverables` are there."""

    workspace: WorkspaceRef
    phase: int
    paths: list[str]
    # deliverables (paths or globs): each must match a file that is not empty and was
    # written by this job (not as the job's start left it: the phase-1 snapshot)
    deliverables: list[str] = []


class CheckFilesResult(BaseModel):
    states: dict[str, Literal["changed", "unchanged", "missing"]]
    delivered: list[str] = []  # the files that satisfy `deliverables`
    undelivered: list[str] = []  # what `deliverables` found wrong, a sentence each


class TodoSpec(BaseModel):
    id: int
    content: str


class LoadTodosResult(BaseModel):
    ok: bool
    reason: str = ""
    title: str = ""
    todos: list[TodoSpec] = []


class ArchiveRequest(BaseModel):
    workspace: WorkspaceRef
    phase: int
    record: dict[str, Any]


class WriteOutputRequest(BaseModel):
    workspace: WorkspaceRef
    path: str  # relative to the workspace, e.g. output/completion.json
    data: dict[str, Any]
    text: str | None = None  # set: written as it is (a markdown record) instead of `data`
    # `text` added at the end of the file (a follow-up instruction to instructions.md), once:
    # an attempt that finds the file already ending with it writes nothing
    append: bool = False


class SnapshotRequest(BaseModel):
    """Input of `snapshot_phase`: record the workspace and the job's state at a phase start."""

    workspace: WorkspaceRef
    phase: int
    state: dict[str, Any]  # the workflow's PhaseStart (workflows/carry.py), as JSON
    config: ResolvedConfig | None = None  # given once per run: kept as .switchback/config.json


class RestoreRequest(BaseModel):
    """Input of `restore_workspace`: put the workspace back as it was at the start of
    `phase` (its snapshot), archiving what it replaces under archive/rewound/<from_phase>/."""

    workspace: WorkspaceRef
    phase: int  # the snapshot to restore
    from_phase: int  # the phase the rewind leaves (names the archive folder and the plan)


class RestoreResult(BaseModel):
    found: bool  # False: no snapshot of that phase (nothing was changed); `reason` says why
    reason: str = ""
    restored: int = 0  # files written back (changed or deleted since the snapshot)
    deleted: int = 0  # files created since the snapshot, removed
    archived: int = 0  # versions kept under `archive_dir` before they were replaced
    archive_dir: str = ""
    paths: list[str] = []  # the first few paths it changed, for people


# -- model calls -----------------------------------------------------------------------


class InlineMessage(BaseModel):
    """A message the workflow made (kickoff, nudge, control-tool result)."""

    index: int
    role: Literal["user", "tool"]
    content: str
    tool_call_id: str | None = None


class ModelRequest(BaseModel):
    workspace: WorkspaceRef
    llm: LlmSettings
    conversation: str  # conversation key, e.g. "phase_0003"; new key = empty conversation
    length: int  # messages in the conversation before this call, incl. `inline`
    inline: list[InlineMessage] = []  # to store before the call
    system_prompt: str | None = None  # given on the first call of a conversation only
    todo_block: str = ""  # layer 2, shown on every call
    tools: list[str] = []  # tool names offered (layer 3)
    call_key: str = ""  # stable per call across retries (the scripted server uses it)
    preview_tools: list[str] = []  # tools whose raw arguments the reply should preview
    context: ContextPolicy = ContextPolicy()
    summary_upto: int = 0  # messages before this index are folded into the stored summary
    token_ratio: float = 1.0  # reported / estimated prompt tokens of the last call
    may_compact: bool = True  # False: call the model even above the threshold
    # the previous conversation's last messages (results of the turn that ended its phase)
    closing: list[InlineMessage] = []
    closing_conversation: str = ""
    tool_record: str = ""  # S3 key of the job's tool record ("": the worker's own schemas)
    max_output_chars: int = 200_000  # a longer answer text is cut; longer arguments refused
    replay_from: str = ""  # a rerun: its source job (ResolvedConfig.replay_from)
    replay_on_divergence: str = "live"
    # `{{instructions}}` in the system prompt becomes instructions.md, cut at this many chars
    instructions_max_chars: int = 0
    # above 0: the endpoint is asked for a streamed reply and its text is published to the
    # job's live stream in batches this many seconds apart (live.tokens; docs/live.md)
    stream_interval: float = 0.0


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ToolCallInfo(BaseModel):
    id: str
    name: str
    error: str | None = None  # malformed JSON / arguments that fail the tool's schema
    args: dict[str, Any] | None = None  # CONTROL_TOOLS, CHECKED_TOOLS only (validated)
    summary: str = ""  # e.g. "chunks/chunk_001.md" - for activity summaries and the UI
    digest: str = ""  # hash of name + arguments
    preview: str = ""  # raw arguments, capped (only for `preview_tools`: approvals)
    needs_approval: bool = False  # the tool itself asks for approval of this call
    # set: the job's model profile does not let the call run, and says why (its reply guard)
    profile_refusal: str = ""


class ModelReply(BaseModel):
    content: str = ""  # assistant text, capped
    tool_calls: list[ToolCallInfo] = []
    finish_reason: str | None = None
    usage: Usage = Usage()
    message_index: int  # where the assistant message was stored; -1: no call was made
    estimated_prompt_tokens: int = 0  # tiktoken estimate of what was (or would be) sent
    needs_compaction: bool = False  # the prompt passed the threshold: summarize first
    call_ms: int = 0  # how long the endpoint took to answer (0: no call was made)
    attempt: int = 1  # the activity attempt that answered (the live stream's model.end)


KEEP_RECENT_MESSAGES = 6  # raw messages a summary leaves after it (the last ones)


class SummarizeRequest(BaseModel):
    workspace: WorkspaceRef
    llm: LlmSettings
    conversation: str
    length: int
    done: int  # messages already folded into the current summary
    keep_recent: int = KEEP_RECENT_MESSAGES  # older histories: context.keep_recent_messages
    prompt: str  # the summarization prompt (configs/prompts/summarization.md)
    context: ContextPolicy = ContextPolicy()  # the folded part is shown as the model saw it
    record_path: str  # workspace path for the human-readable record of this summary
    call_key: str = ""


class SummarizeResult(BaseModel):
    upto: int  # messages before this index are now in the summary
    chars: int = 0
    usage: Usage = Usage()


# -- tool calls -------------------------------------------------------------------------


SEARCH_RESULTS = 3  # tools one tool_search query loads, at most


class ToolLimits(BaseModel):
    read_max_chars: int
    max_file_bytes: int
    min_todos: int
    max_todos: int
    max_result_chars: int = 1_000_000  # longer results are cut; full text to tool_outputs/
    deferred: list[str] = []  # tools tool_search may load
    search_results: int = SEARCH_RESULTS  # older histories: tools.search_results
    approved: bool = False  # a person approved this very call (see ToolSpec.needs_approval)


class ToolRequest(BaseModel):
    workspace: WorkspaceRef
    conversation: str
    assistant_index: int  # the assistant message holding the call's arguments
    call_id: str
    name: str
    result_index: int  # where to store the tool message
    limits: ToolLimits
    # a result this short is not stored here but returned whole (`stored` False): the
    # workflow hands it to the next model call, which stores it while the model answers
    inline_max_chars: int = 0
    tool_record: str = ""  # S3 key of the job's tool record (MCP tools, tool_search)


class ListToolsRequest(BaseModel):
    """Input of `list_tools`: every tool name and glob the job's config uses."""

    workspace: WorkspaceRef
    entries: list[str]
    turn: int = 1  # > 1: a follow-up instruction's tools (a record of its own)


class ToolListing(BaseModel):
    record: str  # S3 key of the job's tool record (`layout.tool_record_path`)
    names: dict[str, list[str]]  # config entry -> the names the model calls


class ToolOutcome(BaseModel):
    ok: bool
    code: str = "ok"  # machine-readable error code the model also sees
    summary: str = ""  # short, for the workflow and the UI; the full text is in the store
    changed: list[str] = Field(default_factory=list)  # workspace paths written or deleted
    tools_added: list[str] = Field(default_factory=list)  # tool_search: tools now loaded
    stored: bool = True  # False: `summary` is the whole result, not yet in the store


class CheckCompletionRequest(BaseModel):
    """Input of `check_completion`: run the config folder's `command` on the workspace."""

    workspace: WorkspaceRef
    folder: str  # the job's config folder under the worker's configs/
    command: str
    timeout_seconds: float = 120


class CheckCompletionResult(BaseModel):
    ok: bool
    output: str = ""  # what the script printed, or the verification's reasons (capped)
    usage: Usage = Usage()  # a verification call's tokens


class VerifyCompletionRequest(BaseModel):
    """Input of `verify_completion`: one call to the job's endpoint with the task and the
    deliverables' contents."""

    workspace: WorkspaceRef
    llm: LlmSettings
    prompt: str  # configs/prompts/verify.md
    paths: list[str]  # the deliverables found
    call_key: str = ""
