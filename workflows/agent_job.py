"""`AgentJob`: the orchestrator loop. Deterministic code only.

    load config -> create workspace -> strategy.begin()
    loop: CallModel -> call_model activity -> strategy.after_model
          ExecuteTools -> each call: refused | strategy's own tool | run_tool activity
                       -> strategy.after_tools
          Complete -> return JobResult;  ReportError -> output/error.json, fail

The conversation is kept by reference: this loop only tracks its key and length
and hands the activities the few messages it made itself (kickoff, nudges,
results of refused and control tools), so the history per step stays small.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.config_schema import ResolvedConfig
    from workflows.phase_alternation import PhaseAlternation
    from workflows.strategy import CallModel, Complete, ExecuteTools, PlannedCall, ReportError
    from workflows.types import (
        ARCHIVE_PHASE,
        CALL_MODEL,
        CREATE_WORKSPACE,
        JOB_FAILED_ERROR,
        LOAD_CONFIG,
        LOAD_TODOS,
        READ_MEMORY,
        RUN_TOOL,
        WRITE_OUTPUT,
        ArchiveRequest,
        CreateWorkspaceRequest,
        CreateWorkspaceResult,
        DocumentSpec,
        InlineMessage,
        JobInput,
        JobResult,
        LoadConfigRequest,
        LoadTodosRequest,
        LoadTodosResult,
        ModelReply,
        ModelRequest,
        ReadMemoryRequest,
        ToolLimits,
        ToolOutcome,
        ToolRequest,
        WorkspaceRef,
        WriteOutputRequest,
    )


@workflow.defn(name="AgentJob")
class AgentJob:
    def __init__(self) -> None:
        self.cfg: ResolvedConfig | None = None
        self.ws: WorkspaceRef | None = None
        self.conversation = ""
        self.length = 0  # messages stored in the current conversation
        self.inline: list[InlineMessage] = []  # made here, stored with the next model call
        self.last_assistant = -1
        self.strategy: PhaseAlternation | None = None

    @workflow.run
    async def run(self, job: JobInput) -> JobResult:
        self.cfg = await workflow.execute_activity(
            LOAD_CONFIG, LoadConfigRequest(config=job.config), result_type=ResolvedConfig,
            start_to_close_timeout=timedelta(seconds=30), summary="load config",
            retry_policy=RetryPolicy(maximum_attempts=5))
        c = self.cfg.config
        self.ws = WorkspaceRef(bucket=c.workspace.bucket, job_id=workflow.info().workflow_id)
        instructions = job.instructions or self.cfg.instructions
        if not instructions:
            raise ApplicationError(f"config '{self.cfg.name}' has no instructions.md and the job "
                                   "input gives no 'instructions'", type=JOB_FAILED_ERROR,
                                   non_retryable=True)
        docs = job.documents if job.documents is not None else self.cfg.documents
        await self._ws_activity(CREATE_WORKSPACE, CreateWorkspaceRequest(
            workspace=self.ws, instructions=instructions, max_file_bytes=c.limits.max_file_bytes,
            documents=[d if isinstance(d, DocumentSpec) else DocumentSpec(path=d) for d in docs]),
            CreateWorkspaceResult, "create workspace")
        self.strategy = PhaseAlternation(self.cfg, self)
        step = await self.strategy.begin()
        while True:
            workflow.set_current_details(self._details())
            if isinstance(step, CallModel):
                reply = await self._call_model(step)
                step = await self.strategy.after_model(reply)
            elif isinstance(step, ExecuteTools):
                outcomes = [await self._execute(p) for p in step.calls]
                step = await self.strategy.after_tools(outcomes)
            elif isinstance(step, Complete):
                return step.result
            else:
                await self._fail(step)

    # -- steps ---------------------------------------------------------------------

    async def _call_model(self, step: CallModel) -> ModelReply:
        assert self.cfg and self.ws
        fresh = step.conversation != self.conversation
        if fresh:
            self.conversation, self.length, self.inline = step.conversation, 0, []
        for text in step.user_messages:
            self._add_inline("user", text)
        llm = self.cfg.config.llm
        req = ModelRequest(workspace=self.ws, llm=llm, conversation=self.conversation,
                           length=self.length, inline=self.inline,
                           system_prompt=step.system_prompt if fresh else None,
                           todo_block=step.todo_block, tools=step.tools,
                           call_key=f"{self.conversation}.m{self.length}")
        try:
            reply = await workflow.execute_activity(
                CALL_MODEL, req, result_type=ModelReply, summary=step.label or "model call",
                start_to_close_timeout=timedelta(seconds=llm.timeout_seconds + 30),
                heartbeat_timeout=timedelta(seconds=llm.heartbeat_timeout_seconds),
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=1), backoff_coefficient=2,
                    maximum_interval=timedelta(seconds=llm.max_retry_interval_seconds),
                    maximum_attempts=llm.max_attempts))
        except ActivityError as e:
            await self._fail(ReportError(f"model call failed ({step.label}): {_cause(e)}",
                                         code="model_call_failed"))
        self.inline = []
        self.length = reply.message_index + 1
        self.last_assistant = reply.message_index
        return reply

    async def _execute(self, planned: PlannedCall) -> ToolOutcome:
        assert self.cfg and self.ws and self.strategy
        call = planned.call
        if self.strategy.batch_closed():
            outcome = ToolOutcome(ok=False, code="skipped", summary="Not run: an earlier call in "
                                  "this turn ended the phase.")
        elif planned.refusal is not None:
            outcome = ToolOutcome(ok=False, code=planned.refusal_code,
                                  summary=f"Error [{planned.refusal_code}]: {planned.refusal}")
        elif self.strategy.owns_tool(call.name):
            outcome = await self.strategy.run_own_tool(call)
        else:
            return await self._run_tool(call)
        self._add_inline("tool", outcome.summary, call.id)
        return outcome

    async def _run_tool(self, call) -> ToolOutcome:
        assert self.cfg and self.ws
        c = self.cfg.config
        req = ToolRequest(workspace=self.ws, conversation=self.conversation,
                          assistant_index=self.last_assistant, call_id=call.id,
                          name=call.name, result_index=self.length,
                          limits=ToolLimits(read_max_chars=c.limits.read_max_chars,
                                            max_file_bytes=c.limits.max_file_bytes,
                                            min_todos=c.phase_settings.min_todos,
                                            max_todos=c.phase_settings.max_todos))
        self.length += 1
        try:
            return await workflow.execute_activity(
                RUN_TOOL, req, result_type=ToolOutcome,
                summary=f"{call.name} {call.summary}".strip()[:200],
                start_to_close_timeout=timedelta(seconds=c.retries.tool_timeout_seconds),
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=c.retries.tool_initial_interval_seconds),
                    backoff_coefficient=c.retries.tool_backoff,
                    maximum_attempts=c.retries.tool_attempts))
        except ActivityError as e:
            await self._fail(ReportError(
                f"tool '{call.name}' ({call.summary}) failed after {c.retries.tool_attempts} "
                f"attempts: {_cause(e)}", code="tool_failed"))
            raise  # unreachable: _fail raises

    def _add_inline(self, role: str, content: str, call_id: str | None = None) -> None:
        self.inline.append(InlineMessage(index=self.length, role=role, content=content,
                                         tool_call_id=call_id))  # type: ignore[arg-type]
        self.length += 1

    async def _fail(self, err: ReportError) -> None:
        workflow.logger.error("job failed: %s", err.what)
        if self.ws is not None:
            await self.write_output("output/error.json", {
                "status": "failed", "code": err.code, "error": err.what,
                "phase": self.strategy.phase.number if self.strategy and self.strategy.phase
                else None})
        raise ApplicationError(err.what, {"code": err.code}, type=JOB_FAILED_ERROR,
                               non_retryable=True)

    # -- Effects for the strategy ------------------------------------------------------

    async def read_memory(self) -> str:
        assert self.cfg and self.ws
        req = ReadMemoryRequest(workspace=self.ws,
                                max_chars=self.cfg.config.limits.workspace_md_max_chars)
        return await self._ws_activity(READ_MEMORY, req, str, "read workspace.md")

    async def load_todos(self, min_todos: int, max_todos: int) -> LoadTodosResult:
        assert self.ws
        req = LoadTodosRequest(workspace=self.ws, min_todos=min_todos, max_todos=max_todos)
        return await self._ws_activity(LOAD_TODOS, req, LoadTodosResult, "check todos.yaml")

    async def archive_phase(self, phase: int, record: dict) -> None:
        assert self.ws
        await self._ws_activity(ARCHIVE_PHASE, ArchiveRequest(workspace=self.ws, phase=phase,
                                record=record), str, f"archive/phase_{phase}.yaml")

    async def write_output(self, path: str, data: dict) -> None:
        assert self.ws
        await self._ws_activity(WRITE_OUTPUT, WriteOutputRequest(workspace=self.ws, path=path,
                                data=data), str, f"write {path}")

    async def _ws_activity(self, name: str, req, result_type, summary: str):
        attempts = self.cfg.config.retries.workspace_attempts if self.cfg else 5
        return await workflow.execute_activity(
            name, req, result_type=result_type, summary=summary,
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2,
                                     maximum_interval=timedelta(seconds=20),
                                     maximum_attempts=attempts))

    def _details(self) -> str:
        s = self.strategy
        if s is None or s.phase is None:
            return "starting"
        ph = s.phase
        return (f"**Phase {ph.number} ({ph.kind})**: {ph.title}\n\n"
                + "\n".join(f"- [{'x' if t.status == 'completed' else ' '}] {t.id}. {t.content}"
                            for t in ph.todos)
                + f"\n\nsteps {s.totals.steps}, tool calls {s.totals.tool_calls}, "
                f"tokens {s.totals.tokens_in} in / {s.totals.tokens_out} out")


def _cause(e: BaseException) -> str:
    """The message of the error the activity raised, in one line."""
    while isinstance(e, ActivityError) and e.__cause__ is not None:
        e = e.__cause__
    return " ".join(str(e).split())[:500]
