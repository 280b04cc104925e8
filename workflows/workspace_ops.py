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
`completion` is the job's completion service (workflows/completion/): `deliverables` asks it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from switchback.workflows import child_jobs, job_start
    from switchback.workflows.completion import Completion, CompletionState, DeliverablesChecked
    from switchback.workflows.contract import (
        ARCHIVE_PHASE,
        CHECK_FILES,
        CREATE_WORKSPACE,
        LOAD_TODOS,
        READ_MEMORY,
        SNAPSHOT_PHASE,
        WRITE_OUTPUT,
        ArchiveRequest,
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
        WorkspaceRef,
        WriteOutputRequest,
        layout,
    )
    from switchback.workflows.failures import StepFailed, cause_of, is_activity_failure
    from switchback.workflows.retry_policies import retry_policy
    from switchback.workflows.steering import Steering
    from switchback.workflows.strategies.base import ChildOutcome, RunChildren

WORKSPACE_MD_CHARS = 12_000  # workspace.md in the system prompt, cut at this many characters
LOCAL_OPERATIONS = {READ_MEMORY, LOAD_TODOS, ARCHIVE_PHASE, WRITE_OUTPUT, SNAPSHOT_PHASE,
                    CHECK_FILES}


class WorkspaceOps:
    def __init__(self, ws: WorkspaceRef, cfg: ResolvedConfig,
                 steering: Steering | None = None,
                 completion: CompletionState | None = None) -> None:
        self.ws = ws
        self.cfg = cfg
        self.steering = steering or Steering()  # what reaches a nested job's children
        self.completion = Completion(self, completion)  # how the job ends (verified)
        self.on_usage: Callable[[int, int], None] = lambda tokens_in, tokens_out: None

    @staticmethod
    def of_job(cfg: ResolvedConfig, steering: Steering,
               completion: CompletionState | None = None) -> WorkspaceOps:
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
                                         run=info.first_execution_run_id), cfg, steering,
                            completion)

    # -- the strategies' port (workflows/strategies/base.py: Port) ------------------------

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
        self.completion.children_ran(outcomes)
        return outcomes

    async def deliverables(self, claimed: list[str] | None = None,
                           content: bool = True) -> DeliverablesChecked:
        return await self.completion.deliverables(claimed, content=content)

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
