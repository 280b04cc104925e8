"""One model call over the current conversation, with compaction when it is needed.

The conversation is kept by reference (workflows/conversation.py): the request names
it and its length and carries the few messages the workflow made; the activity
stores them, assembles the prompt from the store and stores the answer. When the
assembled prompt passes the context policy's threshold the activity answers
`needs_compaction` without calling the model; then `summarize_conversation` folds the
older turns into the running summary and the call is made again.

A fast endpoint's call runs as a local activity when the job opts in
(`llm.local_calls_in_a_row` above 0): in the
workflow task that asked for it, with no activity task to dispatch and no workflow task
of its own - the step's server round trips and most of its history events go. Only while
the call before answered in under 2 s (LOCAL_CALL_BELOW_SECONDS; a slow endpoint would
hold the workflow task open for the whole call), only where the workflow's worker runs
call_model itself (`ResolvedConfig.model_calls_local`, the worker's say), and at most
`llm.local_calls_in_a_row` in a row: the next goes through the server, which ends the
workflow task, so the job's progress, queries and signals wait at most that many fast
calls. A worker that dies mid-chain loses the chain's workflow task: the next worker
replays it, and the calls made again adopt the answers their first run stored. A local
call gets one attempt and a short timeout: one that fails in a way a retry may mend goes
through the server, which retries it as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.contract import (
        CALL_MODEL,
        SUMMARIZE,
        ModelReply,
        ModelRequest,
        ResolvedConfig,
        SummarizeRequest,
        SummarizeResult,
        Usage,
        WorkspaceRef,
        layout,
    )
    from switchback.workflows.conversation import Conversation
    from switchback.workflows.failures import StepFailed, cause_of, is_activity_failure, queue_wait
    from switchback.workflows.retry_policies import retry_policy
    from switchback.workflows.strategies.base import CallModel

LOCAL_CALL_BELOW_SECONDS = 2.0  # a call may run locally only after one that answered faster


@dataclass
class ModelTurn:
    reply: ModelReply
    summary_usage: Usage  # tokens spent on summaries before the answer
    call: str = ""  # the call's key (the live stream's `call`)


async def call_model(conv: Conversation, step: CallModel, notes: list[str],
                     cfg: ResolvedConfig, ws: WorkspaceRef, phase: int,
                     summary: str = "",
                     on_start: Callable[[str], None] | None = None) -> ModelTurn:
    """Ask the model for its next turn in `step.conversation` (a new key starts a new,
    empty conversation); `notes` (breaker messages) go in as user messages. `summary`: what
    the web UI shows for the call (default: the step's label); `on_start`: told the call's
    key before it is made (the live stream's model.start)."""
    fresh = step.conversation != conv.key
    closing, closing_key = conv.start(step.conversation) if fresh else ([], "")
    for text in step.user_messages + notes:
        conv.add("user", text)
    c = cfg.config
    req = ModelRequest(workspace=ws, llm=c.llm, conversation=conv.key, length=conv.length,
                       inline=conv.inline, system_prompt=step.system_prompt if fresh else None,
                       todo_block=step.todo_block, tools=step.tools,
                       call_key=f"{conv.key}.m{conv.length}", preview_tools=c.approval_required,
                       context=c.context, summary_upto=conv.summary_upto,
                       token_ratio=conv.token_ratio, closing=closing,
                       closing_conversation=closing_key, tool_record=cfg.tool_record,
                       instructions_max_chars=c.limits.instructions_max_chars,
                       replay_from=cfg.replay_from,
                       replay_on_divergence=cfg.replay_on_divergence,
                       stream_interval=c.live_token_seconds if cfg.live_retain else 0.0)
    if on_start is not None:
        on_start(req.call_key)
    reply = await _model_activity(req, step.label, cfg, summary, conv)
    conv.inline = []
    spent = Usage()
    if reply.needs_compaction:
        spent = await _compact(conv, cfg, ws, phase)
        reply = await _model_activity(req.model_copy(update={
            "inline": [], "system_prompt": None, "summary_upto": conv.summary_upto,
            "may_compact": False, "closing": []}), step.label, cfg, summary, conv)
    if reply.usage.prompt_tokens and reply.estimated_prompt_tokens:
        conv.token_ratio = min(3.0, max(0.33, reply.usage.prompt_tokens
                                        / reply.estimated_prompt_tokens))
    conv.length = reply.message_index + 1
    conv.last_assistant = reply.message_index
    return ModelTurn(reply, spent, req.call_key)


async def _compact(conv: Conversation, cfg: ResolvedConfig, ws: WorkspaceRef,
                   phase: int) -> Usage:
    """Fold the older part of the conversation into its running summary."""
    conv.summaries += 1
    c = cfg.config
    req = SummarizeRequest(
        workspace=ws, llm=c.llm, conversation=conv.key, length=conv.length,
        done=conv.summary_upto, prompt=cfg.prompts["summarization"], context=c.context,
        record_path=layout.summary_path(phase, conv.summaries),
        call_key=f"{conv.key}.summary{conv.summaries}")
    try:
        res: SummarizeResult = await workflow.execute_activity(
            SUMMARIZE, req, result_type=SummarizeResult, summary=f"summarize phase {phase}",
            task_queue=c.task_queues.model,
            schedule_to_start_timeout=queue_wait(c.task_queues, c.task_queues.model),
            start_to_close_timeout=timedelta(seconds=c.llm.timeout_seconds + 30),
            heartbeat_timeout=timedelta(seconds=c.llm.heartbeat_timeout_seconds),
            retry_policy=retry_policy(c.llm.retry))
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        raise StepFailed(f"summarization failed: {cause_of(e, c.task_queues.model)}",
                         "model_call_failed") from e
    conv.summary_upto = res.upto
    return res.usage


def _runs_locally(conv: Conversation, cfg: ResolvedConfig) -> bool:
    """Does this model call run as a local activity (see the module's docstring)?"""
    llm = cfg.config.llm
    return (cfg.model_calls_local and not cfg.config.task_queues.model
            and 0 <= conv.last_call_ms < LOCAL_CALL_BELOW_SECONDS * 1000
            and conv.local_in_a_row < llm.local_calls_in_a_row)


async def _model_activity(req: ModelRequest, label: str, cfg: ResolvedConfig,
                          summary: str, conv: Conversation) -> ModelReply:
    llm, queues = cfg.config.llm, cfg.config.task_queues
    reply = await _local_call(req, label, cfg, summary) if _runs_locally(conv, cfg) else None
    conv.local_in_a_row = conv.local_in_a_row + 1 if reply is not None else 0
    if reply is None:
        try:
            reply = await workflow.execute_activity(
                CALL_MODEL, req, result_type=ModelReply,
                summary=summary or label or "model call", task_queue=queues.model,
                schedule_to_start_timeout=queue_wait(queues, queues.model),
                start_to_close_timeout=timedelta(seconds=llm.timeout_seconds + 30),
                heartbeat_timeout=timedelta(seconds=llm.heartbeat_timeout_seconds),
                retry_policy=retry_policy(llm.retry))
        except ActivityError as e:
            if is_cancelled_exception(e):
                raise
            raise _failed(e, label, cfg) from e
    conv.last_call_ms = reply.call_ms
    return reply


async def _local_call(req: ModelRequest, label: str, cfg: ResolvedConfig,
                      summary: str) -> ModelReply | None:
    """The call as a local activity: one attempt, with a timeout a fast endpoint keeps
    (LOCAL_CALL_BELOW_SECONDS x 5, at least 10 s). None when it failed in a way a retry
    may mend (an error the endpoint may not repeat, a timeout): the call then goes through
    the server, whose retries the web UI and the history show as activity attempts."""
    try:
        reply: ModelReply = await workflow.execute_local_activity(
            CALL_MODEL, req, result_type=ModelReply, summary=summary or label or "model call",
            start_to_close_timeout=timedelta(
                seconds=max(10.0, 5 * LOCAL_CALL_BELOW_SECONDS)),
            retry_policy=RetryPolicy(maximum_attempts=1))
        return reply
    except Exception as e:  # a local activity raises the activity's own error, not ActivityError
        if is_cancelled_exception(e) or not is_activity_failure(e):
            raise
        if isinstance(e, ApplicationError) and e.non_retryable:
            raise _failed(e, label, cfg) from e
        return None


def _failed(e: BaseException, label: str, cfg: ResolvedConfig) -> StepFailed:
    return StepFailed(f"model call failed ({label}): {cause_of(e, cfg.config.task_queues.model)}",
                      "model_call_failed")
