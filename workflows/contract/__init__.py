"""The contract between the workflows and everything outside them.

What crosses the workflow/activity boundary and the client/workflow boundary lives
here and nowhere else; both sides import it, and `activities/` imports nothing else
from `workflows/` (tests/test_layering.py checks it):

    names.py     task queue, workflow and activity names, the failure type, search attributes
    job.py       JobInput, JobResult, ApproveRequest, JobState (the `state` query)
    inputs.py    raw JSON from people -> those types, or InputError naming the field
    requests.py  each activity's input and result
    config.py    the job config schema (configs/defaults.yaml and its children)
    layout.py    the workspace and `.switchback/` layout: every path switchback uses
    pipeline.py  DocumentPipeline's input, result and activity types

Everything is plain data (pydantic models, constants, pure path functions): no I/O,
no clients, nothing that breaks workflow determinism.
"""

from switchback.workflows.contract.config import (
    ContextPolicy,
    JobConfig,
    LlmSettings,
    ResolvedConfig,
    StrategicTodos,
)
from switchback.workflows.contract.inputs import (
    NO_INPUT,
    InputError,
    approve_request,
    follow_up,
    from_raw,
    instruction,
    job_id_problem,
    job_input,
    rewind_request,
)
from switchback.workflows.contract.job import (
    ApproveRequest,
    DocumentSpec,
    JobInput,
    JobResult,
    JobState,
    JobStatus,
    PendingApproval,
    PhaseView,
    RewindRequest,
    StepLine,
    Todo,
    TokenCount,
)
from switchback.workflows.contract.names import (
    ARCHIVE_PHASE,
    CALL_MODEL,
    CHECK_COMPLETION,
    CHECK_FILES,
    CHECKED_TOOLS,
    CONTROL_TOOLS,
    CREATE_WORKSPACE,
    INSTRUCT,
    JOB_FAILED_ERROR,
    LIST_TOOLS,
    LOAD_CONFIG,
    LOAD_TODOS,
    READ_MEMORY,
    RESTORE_WORKSPACE,
    RUN_TOOL,
    SA_COST,
    SA_LAST_ERROR,
    SA_PHASE,
    SA_PHASE_NUMBER,
    SA_STATUS,
    SA_STRATEGY,
    SA_TODO,
    SA_TODOS,
    SA_TOKENS,
    SEARCH_ATTRIBUTES,
    SNAPSHOT_PHASE,
    SUMMARIZE,
    TASK_QUEUE,
    TOOL_ACTIVITY_PREFIX,
    VERIFY_COMPLETION,
    WORKFLOW_TYPE,
    WRITE_OUTPUT,
)
from switchback.workflows.contract.requests import (
    ArchiveRequest,
    CheckCompletionRequest,
    CheckCompletionResult,
    CheckFilesRequest,
    CheckFilesResult,
    CreateWorkspaceRequest,
    CreateWorkspaceResult,
    InlineMessage,
    ListToolsRequest,
    LoadConfigRequest,
    LoadTodosRequest,
    LoadTodosResult,
    ModelReply,
    ModelRequest,
    ReadMemoryRequest,
    RestoreRequest,
    RestoreResult,
    SnapshotRequest,
    SummarizeRequest,
    SummarizeResult,
    TodoSet,
    TodoSpec,
    ToolCallInfo,
    ToolLimits,
    ToolListing,
    ToolOutcome,
    ToolRequest,
    Usage,
    VerifyCompletionRequest,
    WorkspaceRef,
    WriteOutputRequest,
)

__all__ = [
    "ARCHIVE_PHASE", "CALL_MODEL", "CHECK_COMPLETION", "CHECK_FILES", "CHECKED_TOOLS",
    "CONTROL_TOOLS", "CREATE_WORKSPACE",
    "INSTRUCT", "JOB_FAILED_ERROR",
    "LIST_TOOLS", "LOAD_CONFIG", "LOAD_TODOS", "READ_MEMORY",
    "RESTORE_WORKSPACE", "RUN_TOOL", "SA_COST", "SA_LAST_ERROR",
    "SA_PHASE", "SA_PHASE_NUMBER", "SA_STATUS", "SA_STRATEGY", "SA_TODO", "SA_TODOS",
    "SA_TOKENS", "SEARCH_ATTRIBUTES", "SNAPSHOT_PHASE", "SUMMARIZE", "TASK_QUEUE",
    "TOOL_ACTIVITY_PREFIX", "VERIFY_COMPLETION", "WORKFLOW_TYPE", "WRITE_OUTPUT",
    "ApproveRequest", "ArchiveRequest", "CheckCompletionRequest", "CheckCompletionResult",
    "CheckFilesRequest", "CheckFilesResult",
    "ContextPolicy", "CreateWorkspaceRequest",
    "CreateWorkspaceResult", "DocumentSpec", "InlineMessage", "InputError", "JobConfig",
    "JobInput", "JobResult", "JobState", "JobStatus", "ListToolsRequest", "LlmSettings",
    "LoadConfigRequest",
    "LoadTodosRequest", "LoadTodosResult", "ModelReply", "ModelRequest", "PendingApproval",
    "PhaseView", "ReadMemoryRequest", "RestoreRequest",
    "RestoreResult",
    "ResolvedConfig", "SnapshotRequest",
    "StepLine", "StrategicTodos", "SummarizeRequest", "SummarizeResult", "Todo", "TodoSet",
    "TodoSpec",
    "TokenCount", "ToolCallInfo", "ToolLimits", "ToolListing", "ToolOutcome", "ToolRequest",
    "Usage", "VerifyCompletionRequest", "WorkspaceRef",
    "WriteOutputRequest", "RewindRequest",
    "NO_INPUT", "approve_request", "follow_up", "from_raw", "instruction", "job_id_problem",
    "job_input", "rewind_request",
]
