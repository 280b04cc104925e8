"""Types that cross the workflow/activity boundary, and the names that tie them.

Both sides import this module. Everything here is a pydantic model carried by
the pydantic data converter; no live objects, no `Any` payloads, no credentials.
Fields are added with defaults so that old histories still decode.

History stays small by design: model requests carry a conversation *reference*
(job, conversation key, length) and the few messages the workflow itself made;
model replies carry tool-call *summaries*; tool outcomes carry a short summary.
Full messages live in the workspace store (see activities/conversation_store.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from workflows.config_schema import ContextPolicy, LlmSettings

TASK_QUEUE = "switchback"
WORKFLOW_TYPE = "AgentJob"
PIPELINE_TYPE = "DocumentPipeline"
JOB_FAILED_ERROR = "SwitchbackJobFailed"

# Activity names: the workflow refers to activities only by these.
LOAD_CONFIG = "load_config"
CREATE_WORKSPACE = "create_workspace"
READ_MEMORY = "read_memory"
LOAD_TODOS = "load_todos"
ARCHIVE_PHASE = "archive_phase"
WRITE_OUTPUT = "write_output"
CALL_MODEL = "call_model"
SUMMARIZE = "summarize_conversation"
RUN_TOOL = "run_tool"
READ_REQUIREMENTS = "read_requirements"
READ_DECISION = "read_decision"

# Tools the workflow itself carries out (they change the phase machine's state).
CONTROL_TOOLS = frozenset({"todo_complete", "todo_rewind", "job_complete"})


class DocumentSpec(BaseModel):
    """A file to place under `documents/`: a path on the worker, an s3:// URI, or inline."""

    name: str | None = None  # file name under documents/ (default: the source's base name)
    path: str | None = None  # local path or s3://bucket/key
    text: str | None = None
    base64: str | None = None


class JobInput(BaseModel):
    """Workflow input. Plain JSON, so `temporal workflow start --input` works."""

    config: str | dict[str, Any] = "creator"
    instructions: str | None = None
    documents: list[str | DocumentSpec] | None = None  # None: the config's own documents


class ApproveRequest(BaseModel):
    """Input of the `approve` update."""

    call_id: str
    approved: bool
    note: str = ""


class JobResult(BaseModel):
    status: Literal["completed", "cancelled", "budget_exhausted", "stuck", "failed"]
    summary: str = ""
    deliverables: list[str] = []
    confidence: float | None = None
    notes: str = ""
    phases: int = 0
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class WorkspaceRef(BaseModel):
    bucket: str
    job_id: str


# -- workspace activities ----------------------------------------------------------


class LoadConfigRequest(BaseModel):
    config: str | dict[str, Any]


class CreateWorkspaceRequest(BaseModel):
    workspace: WorkspaceRef
    instructions: str
    documents: list[DocumentSpec]
    max_file_bytes: int


class CreateWorkspaceResult(BaseModel):
    files: list[str]


class ReadMemoryRequest(BaseModel):
    workspace: WorkspaceRef
    max_chars: int


class LoadTodosRequest(BaseModel):
    workspace: WorkspaceRef
    min_todos: int
    max_todos: int
    max_result_chars: int = 1_000_000  # longer results are cut; full text to tool_outputs/
    deferred: list[str] = []  # tools tool_search may load
    search_results: int = 3
    approved: bool = False  # a person approved this very call (see ToolSpec.needs_approval)


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


# -- model calls ---------------------------------------------------------------------


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


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ToolCallInfo(BaseModel):
    id: str
    name: str
    error: str | None = None  # malformed JSON / arguments that fail the tool's schema
    args: dict[str, Any] | None = None  # control tools only (small, validated)
    summary: str = ""  # e.g. "chunks/chunk_001.md" - for activity summaries and the UI
    digest: str = ""  # hash of name + arguments
    preview: str = ""  # raw arguments, capped (only for `preview_tools`: approvals)
    needs_approval: bool = False  # the tool itself asks for approval of this call


class ModelReply(BaseModel):
    content: str = ""  # assistant text, capped
    tool_calls: list[ToolCallInfo] = []
    finish_reason: str | None = None
    usage: Usage = Usage()
    message_index: int  # where the assistant message was stored; -1: no call was made
    estimated_prompt_tokens: int = 0  # tiktoken estimate of what was (or would be) sent
    needs_compaction: bool = False  # the prompt passed the threshold: summarize first


class SummarizeRequest(BaseModel):
    workspace: WorkspaceRef
    llm: LlmSettings
    conversation: str
    length: int
    done: int  # messages already folded into the current summary
    keep_recent: int
    prompt: str  # the summarization prompt (configs/prompts/summarization.md)
    context: ContextPolicy = ContextPolicy()  # the folded part is shown as the model saw it
    record_path: str  # workspace path for the human-readable record of this summary
    call_key: str = ""


class SummarizeResult(BaseModel):
    upto: int  # messages before this index are now in the summary
    chars: int = 0
    usage: Usage = Usage()


# -- tool calls -----------------------------------------------------------------------


class ToolLimits(BaseModel):
    read_max_chars: int
    max_file_bytes: int
    min_todos: int
    max_todos: int
    max_result_chars: int = 1_000_000  # longer results are cut; full text to tool_outputs/
    deferred: list[str] = []  # tools tool_search may load
    search_results: int = 3
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


class ToolOutcome(BaseModel):
    ok: bool
    code: str = "ok"  # machine-readable error code the model also sees
    summary: str = ""  # short, for the workflow and the UI; the full text is in the store
    changed: list[str] = Field(default_factory=list)  # workspace paths written or deleted
    tools_added: list[str] = Field(default_factory=list)  # tool_search: tools now loaded
    stored: bool = True  # False: `summary` is the whole result, not yet in the store


# -- the document pipeline -------------------------------------------------------------


class PipelineInput(BaseModel):
    """DocumentPipeline input (plain JSON): a Creator job, then a Validator per requirement."""

    creator_config: str | dict[str, Any] = "creator"
    validator_config: str | dict[str, Any] = "validator"
    instructions: str | None = None  # for the creator (default: its config's own)
    documents: list[str | DocumentSpec] | None = None  # for the creator
    max_concurrent: int = Field(3, ge=1, le=100)  # validator jobs at a time


class RequirementRef(BaseModel):
    id: str
    statement: str
    regime: str = ""
    record: dict[str, Any] = {}  # the requirement as the creator wrote it (capped)


class ReadRequirementsRequest(BaseModel):
    workspace: WorkspaceRef
    path: str = "output/requirements.json"


class ValidationOutcome(BaseModel):
    requirement_id: str
    job_id: str
    status: str  # the validator job's status, or "failed"
    decision: str | None = None  # accept | duplicate | reject
    duplicate_of: str | None = None
    reason: str = ""
    error: str | None = None


class PipelineResult(BaseModel):
    status: Literal["completed", "completed_with_failures", "failed"]
    creator_job: str
    requirements: int = 0
    decisions: dict[str, int] = {}
    failed: list[str] = []
