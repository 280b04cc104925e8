"""Names that tie the two sides together: task queue, workflow types, activity names,
the job's failure type and its search attributes.

The workflow refers to activities only by these names; worker.py registers the
activities under them. Renaming one is a change running jobs would see.
"""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

TASK_QUEUE = "switchback"
WORKFLOW_TYPE = "AgentJob"
INSTRUCT = "instruct"  # the update and signal that give a job its next instruction
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
LIST_TOOLS = "list_tools"  # at a job's start: resolve its tool names, record their schemas
CHECK_FILES = "check_files"  # has a file changed since the phase began (evidence of a todo)
CHECK_COMPLETION = "check_completion"  # completion.check: the config's script on the workspace
VERIFY_COMPLETION = "verify_completion"  # completion.check model: one verification model call
RESTORE_WORKSPACE = "restore_workspace"  # a rewind with restore_phase: files back to a snapshot
# A tool run as a local activity has its own activity type, `tool.<name>` (the web UI's
# timeline names a local activity by its type only); worker.py serves them with one
# dynamic activity. Bounded: one type per tool, never per argument (SDK metrics label it).
TOOL_ACTIVITY_PREFIX = "tool."

# Tools the workflow itself carries out (they change the strategy's state); the model
# activity passes their parsed arguments to the workflow. A strategy offers its own.
CONTROL_TOOLS = frozenset({
    "todo_complete", "todo_rewind", "job_complete",  # phase_alternation, nested, react
    "submit_plan", "submit_evaluation", "step_result",  # plan_revise_execute
    "classify_task",  # auto
})
# Tools an activity runs whose parsed arguments the workflow sees too (a todo_write that
# repeats the ritual's own todos is refused before it runs: ritual.refuse_repeated_plans).
CHECKED_TOOLS = frozenset({"todo_write"})

# Search attributes (registered by devstack and worker.py; see docs/ui.md). SQL visibility
# (the dev server, PostgreSQL/MySQL clusters) allows at most 3 Int, 3 Double, 3 Text and
# 10 Keyword custom attributes per namespace: these use 2, 1, 2 and 4.
SA_PHASE = SearchAttributeKey.for_keyword("SwitchbackPhase")  # the phase's kind
SA_PHASE_NUMBER = SearchAttributeKey.for_int("SwitchbackPhaseNumber")
SA_TOKENS = SearchAttributeKey.for_int("SwitchbackTokens")
SA_STATUS = SearchAttributeKey.for_keyword("SwitchbackStatus")
SA_STRATEGY = SearchAttributeKey.for_keyword("SwitchbackStrategy")
SA_TODOS = SearchAttributeKey.for_keyword("SwitchbackTodos")  # done/total, e.g. "3/5"
SA_TODO = SearchAttributeKey.for_text("SwitchbackTodo")  # the current todo
SA_COST = SearchAttributeKey.for_float("SwitchbackCostUsd")
SA_LAST_ERROR = SearchAttributeKey.for_text("SwitchbackLastError")
# name -> type as `temporal operator search-attribute create --type` spells it
SEARCH_ATTRIBUTES = {"SwitchbackPhase": "Keyword", "SwitchbackPhaseNumber": "Int",
                     "SwitchbackTokens": "Int", "SwitchbackStatus": "Keyword",
                     "SwitchbackStrategy": "Keyword", "SwitchbackTodos": "Keyword",
                     "SwitchbackTodo": "Text", "SwitchbackCostUsd": "Double",
                     "SwitchbackLastError": "Text"}
