"""The job's workspace operations, as activities with the workspace retry policy.

Each is a few S3 requests; S3 trouble is retried up to `workspace.retry.maximum_attempts`
times with backoff. The reads and writes of phase transitions (`read_memory`,
`load_todos`, `archive_phase`, `write_output`, `snapshot_phase`, `check_files`) are local
activities, run in the workflow task by the workflow's own worker: a phase
transition costs no activity dispatch and no extra workflow task per operation;
`create_workspace` too in jobs that start locally (workflows/job_start.py).
An operation that fails for good raises `StepFailed` ("workspace_failed"), so the job
fails the one typed way. A nested job's child jobs go to workflows/child_jobs.py.

This is the strategies' `Port` (workflows/strategies/base.py): they await these methods.
`deliverables` checks the job's declared deliverables (workflows/completion.py), whose
record of the model's declarations this object holds for the job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows import child_jobs, completion, job_start
    from workflows.contract import (
        ARCHIVE_PHASE,
        CHECK_COMPLETION,
        CHECK_FILES,
        CREATE_WORKSPACE,
        LOAD_TODOS,
        READ_MEMORY,
        SNAPSHOT_PHASE,
        VERIFY_COMPLETION,
        WRITE_OUTPUT,
        ArchiveRequest,
        CheckCompletionRequest,
        CheckCompletionResult,
        CheckFilesRequest,
        CheckFilesResult,
        CreateWorkspaceRequest,
        CreateWorkspaceResult,
        DocumentSpec,
        InputError,
        LoadTodosRequest,
        LoadTodosResult,
        ReadMemoryRequest,
        ResolvedConfig,
        SnapshotRequest,
        TodoSet,
        VerifyCompletionRequest,
        WorkspaceRef,
        WriteOutputRequest,
        layout,
    )
    from workflows.failures import StepFailed, cause_of, is_activity_failure
    from workflows.retry_policies import retry_policy
    from workflows.steering import Steering
    from workflows.strategies.base import (
        CheckLines,
        ChildOutcome,
        DeliverablesChecked,
        LinesChecked,
        RunChildren,
    )

WORKSPACE_MD_CHARS = 12_000  # workspace.md in the system prompt, cut at this many characters
LOCAL_OPERATIONS = {READ_MEMORY, LOAD_TODOS, ARCHIVE_PHASE, WRITE_OUTPUT, SNAPSHOT_PHASE,
                    CHECK_FILES}


class WorkspaceOps:
    def __init__(self, ws: WorkspaceRef, cfg: ResolvedConfig,
                 steering: Steering | None = None) -> None:
        self.ws = ws
        self.cfg = cfg
        self.steering = steering or Steering()  # what reaches a nested job's children
        # the deliverables, as declared (a new job: no work done yet)
        self.completion = completion.CompletionState(worked=False)
        self.on_usage: Callable[[int, int], None] = lambda tokens_in, tokens_out: None

    @staticmethod
    def of_job(cfg: ResolvedConfig, steering: Steering) -> WorkspaceOps:
        """This job's workspace: the prefix `<job id>/`, or `<parent id>/subjobs/<job id>/`
        for a nested job's child (`nested.within_parent`; InputError without a parent).
        `run` is the job's first run: the prefix's owner the worker's guard checks."""
        info = workflow.info()
        prefix = info.workflow_id
        if cfg.config.nested.within_parent:
            if info.parent is None:
                raise InputError("nested.within_parent: only a child of a nested job works "
                                 "in its parent's workspace; this job has no parent")
            prefix = layout.subjob_prefix(info.parent.workflow_id, info.workflow_id)
        return WorkspaceOps(WorkspaceRef(bucket=cfg.config.workspace.bucket, job_id=prefix,
                                         run=info.first_execution_run_id), cfg, steering)

    # -- the strategies' port (workflows/strategies/base.py: Port) ------------------------

    def patched(self, change: str) -> bool:
        return workflow.patched(change)  # (a forwarded id: each change's own is a constant)

    def task_words(self) -> dict[str, str]:
        return self.completion.task_words

    async def read_memory(self) -> str:
        memory: str = await self.activity(READ_MEMORY, ReadMemoryRequest(
            workspace=self.ws, max_chars=WORKSPACE_MD_CHARS),
            str, "read workspace.md")
        return memory

    async def read_file(self, path: str, max_chars: int = 20_000) -> str:
        text: str = await self.activity(READ_MEMORY, ReadMemoryRequest(
            workspace=self.ws, max_chars=max_chars, path=path), str, f"read {path}")
        return text

    async def check_todos(self, min_todos: int, max_todos: int, written_in: str = "",
                          avoid: tuple[TodoSet, ...] = ()) -> LoadTodosResult:
        gate: LoadTodosResult = await self.activity(LOAD_TODOS, LoadTodosRequest(
            workspace=self.ws, min_todos=min_todos, max_todos=max_todos,
            written_in=written_in, avoid=list(avoid)), LoadTodosResult, "check todos.yaml")
        return gate

    async def check_files(self, phase: int, paths: tuple[str, ...]) -> dict[str, str] | None:
        result = await self.activity(CHECK_FILES, CheckFilesRequest(
            workspace=self.ws, phase=phase, paths=list(paths)), CheckFilesResult,
            f"check {', '.join(paths)}"[:200])
        return result.states  # type: ignore[no-any-return]

    async def lines_lacking(self, check: CheckLines) -> list[str]:
        return (await self._lines(check, mend=False)).problems

    async def mend_lines(self, check: CheckLines) -> LinesChecked:
        return await self._lines(check, mend=True)

    async def _lines(self, check: CheckLines, mend: bool) -> LinesChecked:
        lines = {path: list(want) for path, want in check.lines}
        result = await self.activity(CHECK_FILES, CheckFilesRequest(
            workspace=self.ws, phase=0, paths=[], lines=lines, mend=mend),
            CheckFilesResult, f"check {', '.join(lines)}"[:200])
        return LinesChecked(result.problems, result.mends)

    async def archive(self, phase: int, record: dict[str, Any]) -> str:
        path: str = await self.activity(ARCHIVE_PHASE, ArchiveRequest(
            workspace=self.ws, phase=phase, record=record), str, layout.archive_path(phase))
        return path

    async def write_text(self, path: str, text: str) -> str:
        written: str = await self.activity(WRITE_OUTPUT, WriteOutputRequest(
            workspace=self.ws, path=path, data={}, text=text), str, f"write {path}")
        return written

    async def append_instruction(self, turn: int, text: str) -> str:
        """A follow-up instruction at the end of instructions.md (the task every later
        prompt shows), under its turn's heading."""
        written: str = await self.activity(WRITE_OUTPUT, WriteOutputRequest(
            workspace=self.ws, path=layout.INSTRUCTIONS, data={}, append=True,
            text=f"\n\n{layout.FOLLOW_UP_HEADING}{turn})\n\n{text}\n"), str,
            f"append turn {turn} to {layout.INSTRUCTIONS}")
        return written

    async def run_children(self, children: RunChildren) -> list[ChildOutcome]:
        outcomes = await child_jobs.run(children, self.ws, self.steering)
        completion.record_children(self.completion, outcomes)
        return outcomes

    async def delegates(self) -> None:
        completion.delegated(self.completion)

    async def deliverables(self, claimed: list[str] | None = None,
                           bad: list[str] | None = None,
                           claim: bool = False, content: bool = True) -> DeliverablesChecked:
        """The job's declared deliverables (and `claimed`, a job_complete's) checked; `bad`:
        problems already found with the claim. `claim`: the model claims completion (a
        job_complete, a final answer): with the small profile, one that names nothing
        before any work is done is a problem (completion.nothing_done_problem). `content`:
        with every file there, run completion.check too (not for a question only of which
        are missing)."""
        paths = list(dict.fromkeys(completion.declared(self.cfg, self.completion)
                                   + (claimed or [])))
        req = completion.request(self.cfg, self.ws, paths)
        if claim and not paths and completion.nothing_done(self.cfg, self.completion):
            return completion.checked(paths, None, (bad or []) + [
                completion.nothing_done_problem(self.cfg)])
        if req is None:
            return completion.checked(paths, None, bad)
        result = await self.activity(CHECK_FILES, req, CheckFilesResult, "check deliverables")
        found = completion.task_files_this_turn(
            self.cfg, self.completion, completion.checked(paths, result, bad))
        check, c = self.cfg.config.completion.check, self.cfg.config
        if found.problems or check is None or not content:
            return found
        if check.command is not None and self.cfg.folder is not None:
            verdict = await self.activity(CHECK_COMPLETION, CheckCompletionRequest(
                workspace=self.ws, folder=self.cfg.folder, command=check.command,
                timeout_seconds=check.timeout_seconds), CheckCompletionResult,
                f"check {check.command}", timeout=check.timeout_seconds + 60)
            return completion.content_checked(found, check.command, verdict)
        self.completion.checks += 1
        verdict = await self.activity(VERIFY_COMPLETION, VerifyCompletionRequest(
            workspace=self.ws, llm=c.llm, prompt=self.cfg.prompts["verify"],
            paths=found.delivered, call_key=f"{self.ws.job_id}:verify:{self.completion.checks}"),
            CheckCompletionResult, "verify the deliverables", timeout=c.llm.timeout_seconds + 30,
            task_queue=c.task_queues.model)
        self.on_usage(verdict.usage.prompt_tokens, verdict.usage.completion_tokens)
        return completion.content_checked(found, "a verification call", verdict)

    async def create(self, instructions: str, documents: Sequence[str | DocumentSpec]) -> None:
        """create_workspace: claim the job's prefix, write instructions.md and documents/
        (an activity: it may read documents from the worker's disk)."""
        c = self.cfg
        await self.activity(CREATE_WORKSPACE, CreateWorkspaceRequest(
            workspace=self.ws, instructions=instructions, config_folder=c.folder,
            max_file_bytes=c.config.limits.max_file_bytes,
            documents=[d if isinstance(d, DocumentSpec) else DocumentSpec(path=d)
                       for d in documents]), CreateWorkspaceResult, "create workspace")

    async def write_output(self, path: str, data: dict[str, Any]) -> str:
        result: str = await self.activity(WRITE_OUTPUT, WriteOutputRequest(
            workspace=self.ws, path=path, data=data), str, f"write {path}")
        return result

    async def snapshot(self, phase: int, state: dict[str, Any],
                       config: ResolvedConfig | None) -> int:
        """Record the workspace and `state` at the start of `phase` (for reruns and
        rewinds). From then on the job's requests name this snapshot (`WorkspaceRef.snapshot`):
        a write that replaces a version it names keeps that version first."""
        files: int = await self.activity(SNAPSHOT_PHASE, SnapshotRequest(
            workspace=self.ws, phase=phase, state=state, config=config), int,
            f"snapshot phase {phase}")
        self.ws = self.ws.model_copy(update={"snapshot": phase})
        return files

    async def record_failure(self, what: str, code: str, phase: int | None) -> str:
        """Write output/error.json; `what`, saying so if it could not be written."""
        try:
            await self.write_output(layout.ERROR, {"status": "failed", "code": code,
                                                   "error": what, "phase": phase})
        except Exception as e:
            if not (isinstance(e, StepFailed) or is_activity_failure(e)):
                raise
            return f"{what} ({layout.ERROR} could not be written: {cause_of(e)})"
        return what

    async def activity(self, name: str, req: Any, result_type: type, summary: str,
                       timeout: float | None = None, task_queue: str | None = None) -> Any:
        settings = self.cfg.config.workspace
        timeout_ = timedelta(seconds=timeout or settings.timeout_seconds)
        retry = retry_policy(settings.retry)
        try:
            if (name in LOCAL_OPERATIONS
                    or name == CREATE_WORKSPACE and job_start.local(name)):
                return await workflow.execute_local_activity(
                    name, req, result_type=result_type, summary=summary,
                    start_to_close_timeout=timeout_, retry_policy=retry)
            return await workflow.execute_activity(
                name, req, result_type=result_type, summary=summary, task_queue=task_queue,
                start_to_close_timeout=timeout_, retry_policy=retry)
        except Exception as e:
            if not is_activity_failure(e):
                raise
            raise StepFailed(f"workspace operation '{summary}' failed (retried up to "
                             f"{settings.retry.maximum_attempts} times): {cause_of(e)}",
                             "workspace_failed") from e
