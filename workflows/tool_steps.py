"""One tool call the model asked for, carried out as an activity.

The call's arguments stay in the stored assistant message; the activity reads them
there, runs the tool and stores the result (a short result comes back whole and is
stored with the next model call instead). Workspace tools (`tools.local`) run as
local activities in the workflow task, each under its own activity type `tool.<name>`
(the web UI's timeline names a local activity by its type only); the others are
`run_tool` activities on `task_queues.tools`, whose summary the timeline shows. A tool
that still fails after `tools.retry` stops the job (`StepFailed`); what the
model got wrong comes back as a tool error.

A tool runs to its end even when the job is cancelled meanwhile (its activity waits for the
cancellation to complete, so the job knows whether the effect happened); the cancel then
ends the job once the outcome is recorded. The SDK returns such an activity's result and
drops the job's cancellation, so `cancel_kept`, around the step in AgentJob._execute,
raises it again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.contract import (
        RUN_TOOL,
        TOOL_ACTIVITY_PREFIX,
        InlineMessage,
        ResolvedConfig,
        ToolCallInfo,
        ToolLimits,
        ToolOutcome,
        ToolRequest,
        WorkspaceRef,
    )
    from switchback.workflows.conversation import Conversation
    from switchback.workflows.failures import (
        StepFailed,
        cause_of,
        is_activity_failure,
        queue_wait,
    )
    from switchback.workflows.retry_policies import retry_policy

INLINE_MAX_CHARS = 500


def label(call: ToolCallInfo) -> str:
    """What the web UI shows for the call: the tool and its main argument."""
    return f"{call.name} {call.summary}".strip()[:200]


async def run_tool(conv: Conversation, call: ToolCallInfo, approved: bool,
                   cfg: ResolvedConfig, ws: WorkspaceRef) -> ToolOutcome:
    """One tool call as an activity (a local one for the cheap workspace tools)."""
    c = cfg.config
    req = ToolRequest(workspace=ws, conversation=conv.key, assistant_index=conv.last_assistant,
                      call_id=call.id, name=call.name, result_index=conv.length,
                      limits=ToolLimits(read_max_chars=c.limits.read_max_chars,
                                        max_file_bytes=c.limits.max_file_bytes,
                                        min_todos=c.phase_settings.min_todos,
                                        max_todos=c.phase_settings.max_todos,
                                        max_result_chars=(c.context.max_tool_result_chars
                                                          if c.context.enabled else 1 << 30),
                                        deferred=c.tools.deferred,
                                        approved=approved),
                      tool_record=cfg.tool_record)
    req.inline_max_chars = INLINE_MAX_CHARS
    conv.reserve()
    timeout = timedelta(seconds=c.tools.timeout_seconds)
    retry = retry_policy(c.tools.retry)
    cancel = workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
    try:
        # cheap workspace tools run as local activities, in this workflow task: no
        # activity task to dispatch, no second workflow task per step
        if call.name in c.tools.local:
            outcome: ToolOutcome = await workflow.execute_local_activity(
                TOOL_ACTIVITY_PREFIX + call.name, req, result_type=ToolOutcome, summary=label(call),
                start_to_close_timeout=timeout, retry_policy=retry, cancellation_type=cancel)
        else:
            outcome = await workflow.execute_activity(
                RUN_TOOL, req, result_type=ToolOutcome, task_queue=c.task_queues.tools,
                summary=label(call), start_to_close_timeout=timeout,
                schedule_to_start_timeout=queue_wait(c.task_queues, c.task_queues.tools),
                cancellation_type=cancel, retry_policy=retry)
    except Exception as e:  # a local activity raises the activity's own error, not ActivityError
        if not is_activity_failure(e):
            raise
        raise StepFailed(f"tool '{call.name}' ({call.summary}) failed after "
                         f"{c.tools.retry.maximum_attempts} attempts: "
                         f"{cause_of(e, c.task_queues.tools)}",
                         "tool_failed") from e
    if not outcome.stored:  # a short result: stored by the next model call
        conv.inline.append(InlineMessage(index=req.result_index, role="tool",
                                         content=outcome.summary, tool_call_id=call.id))
    return outcome


@contextlib.contextmanager
def cancel_kept() -> Iterator[None]:
    """Raise, at the end of the block, a job cancel that arrived during it (a tool's wait for
    its cancellation drops it); a cancel from before the block (clean-up) is not raised."""
    before = workflow.cancellation_reason() is not None
    yield
    if not before and workflow.cancellation_reason() is not None:
        raise asyncio.CancelledError("the job was cancelled while the tool ran")
