"""Names that tie the two sides together: task queue, workflow types, activity names,
the job's failure type and its search attributes.

The workflow refers to activities only by these names; worker.py registers the
activities under them. Renaming one is a change running jobs would see.
"""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

TASK_QUEUE = "switchback"
WORKFLOW_TYPE = "AgentJob"
PIPELINE_TYPE = "DocumentPipeline"
JOB_FAILED_ERROR = "SwitchbackJobFailed"  # the one error type a failed job ends with

# Activity names: the workflow refers to activities only by these.
LOAD_CONFIG = "load_config"
CREATE_WORKSPACE = "create_workspace"
READ_MEMORY = "read_memory"
LOAD_TODOS = "load_todos"
ARCHIVE_PHASE = "archive_phase"
WRITE_OUTPUT = "write_output"
SNAPSHOT_PHASE = "snapshot_phase"
CALL_MODEL = "call_model"
SUMMARIZE = "summarize_conversation"
RUN_TOOL = "run_tool"
READ_REQUIREMENTS = "read_requirements"
READ_DECISION = "read_decision"
LIST_TOOLS = "list_tools"  # at a job's start: resolve its tool names, record their schemas
CHECK_FILES = "check_files"  # has a file changed since the phase began (evidence of a todo)

# Tools the workflow itself carries out (they change the strategy's state); the model
# activity passes their parsed arguments to the workflow. A strategy offers its own.
CONTROL_TOOLS = frozenset({
    "todo_complete", "todo_rewind", "job_complete",  # phase_alternation, nested, react
    "submit_plan", "submit_evaluation", "step_result",  # plan_revise_execute
    "classify_task",  # auto
})

# Search attributes (registered by devstack and worker.py; see README "Operating it").
SA_PHASE = SearchAttributeKey.for_keyword("SwitchbackPhase")
SA_PHASE_NUMBER = SearchAttributeKey.for_int("SwitchbackPhaseNumber")
SA_TOKENS = SearchAttributeKey.for_int("SwitchbackTokens")
SA_STATUS = SearchAttributeKey.for_keyword("SwitchbackStatus")
