"""Model steps of AgentJob (a mixin): one model call, with compaction when it is needed.

The conversation is kept by reference: this tracks its key and length and the few
messages the workflow made itself (`inline`), sends them with the next call, and
asks for a summary (`summarize_conversation`) when the call activity reports that
the assembled prompt passed the context policy's threshold.

Uses AgentJob's state: cfg, ws, strategy, conversation, length, inline, notes,
last_assistant, last_step, summary_upto, summaries, token_ratio; and its
`_on_new_phase`, `_add_inline`, `_fail`.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ChildWorkflowError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from workflows.strategy import CallModel, ReportError
    from workflows.types import (
        CALL_MODEL,
        SUMMARIZE,
        ModelReply,
        ModelRequest,
        SummarizeRequest,
        SummarizeResult,
    )


class ModelSteps:
    async def _call_model(self, step: CallModel) -> ModelReply:
        assert self.cfg and self.ws
        fresh = step.conversation != self.conversation
        closing, closing_conversation = (self.inline, self.conversation) if fresh else ([], "")
        if fresh:
            self.conversation, self.length, self.inline = step.conversation, 0, []
            self.summary_upto = 0
            self._on_new_phase()
        for text in step.user_messages + self.notes:
            self._add_inline("user", text)
        self.notes = []
        llm = self.cfg.config.llm
        req = ModelRequest(workspace=self.ws, llm=llm, conversation=self.conversation,
                           length=self.length, inline=self.inline,
                           system_prompt=step.system_prompt if fresh else None,
                           todo_block=step.todo_block, tools=step.tools,
                           call_key=f"{self.conversation}.m{self.length}",
                           preview_tools=self.cfg.config.approval_required,
                           context=self.cfg.config.context, summary_upto=self.summary_upto,
                           token_ratio=self.token_ratio, closing=closing,
                           closing_conversation=closing_conversation)
        reply = await self._model_activity(req, step.label)
        self.inline = []
        if reply.needs_compaction:
            await self._compact()
            reply = await self._model_activity(req.model_copy(update={
                "inline": [], "system_prompt": None, "summary_upto": self.summary_upto,
                "may_compact": False, "closing": []}), step.label)
        if reply.usage.prompt_tokens and reply.estimated_prompt_tokens:
            self.token_ratio = min(3.0, max(0.33, reply.usage.prompt_tokens
                                            / reply.estimated_prompt_tokens))
        self.length = reply.message_index + 1
        self.last_assistant = reply.message_index
        calls = ", ".join(f"{c.name} {c.summary}".strip() for c in reply.tool_calls)
        self.last_step = f"{step.label}: {calls or 'no tool call'}"
        return reply

    async def _compact(self) -> None:
        """Fold the older part of the conversation into its running summary."""
        assert self.cfg and self.ws and self.strategy
        self.summaries += 1
        ph = self.strategy.phase.number if self.strategy.phase else 0
        req = SummarizeRequest(
            workspace=self.ws, llm=self.cfg.config.llm, conversation=self.conversation,
            length=self.length, done=self.summary_upto,
            keep_recent=self.cfg.config.context.keep_recent_messages,
            prompt=self.cfg.prompts["summarization"], context=self.cfg.config.context,
            record_path=f"summaries/phase_{ph}_{self.summaries:03d}.md",
            call_key=f"{self.conversation}.summary{self.summaries}")
        llm = self.cfg.config.llm
        try:
            res = await workflow.execute_activity(
                SUMMARIZE, req, result_type=SummarizeResult, summary=f"summarize phase {ph}",
                task_queue=self.cfg.config.task_queues.model,
                start_to_close_timeout=timedelta(seconds=llm.timeout_seconds + 30),
                heartbeat_timeout=timedelta(seconds=llm.heartbeat_timeout_seconds),
                retry_policy=RetryPolicy(maximum_attempts=llm.max_attempts,
                                         maximum_interval=timedelta(
                                             seconds=llm.max_retry_interval_seconds)))
        except ActivityError as e:
            if is_cancelled_exception(e):
                raise
            await self._fail(ReportError(f"summarization failed: {_cause(e)}",
                                         code="model_call_failed"))
        self.summary_upto = res.upto
        self.strategy.add_usage(res.usage.prompt_tokens, res.usage.completion_tokens)

    async def _model_activity(self, req: ModelRequest, label: str) -> ModelReply:
        assert self.cfg
        llm = self.cfg.config.llm
        try:
            return await workflow.execute_activity(
                CALL_MODEL, req, result_type=ModelReply, summary=label or "model call",
                task_queue=self.cfg.config.task_queues.model,
                start_to_close_timeout=timedelta(seconds=llm.timeout_seconds + 30),
                heartbeat_timeout=timedelta(seconds=llm.heartbeat_timeout_seconds),
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=1), backoff_coefficient=2,
                    maximum_interval=timedelta(seconds=llm.max_retry_interval_seconds),
                    maximum_attempts=llm.max_attempts))
        except ActivityError as e:
            if is_cancelled_exception(e):
                raise
            await self._fail(ReportError(f"model call failed ({label}): {_cause(e)}",
                                         code="model_call_failed"))
            raise  # unreachable: _fail raises



def _cause(e: BaseException) -> str:
    """The message of the error the activity (or child job) raised, in one line."""
    while isinstance(e, ActivityError | ChildWorkflowError) and e.__cause__ is not None:
        e = e.__cause__
    return " ".join(str(e).split())[:500]
