"""The workspace effects a strategy may ask for, as activities (mixed into AgentJob).

Each method is one workspace activity with the workspace retry policy: S3 trouble
is retried up to `retries.workspace_attempts` times with backoff. They are local
activities (run in the workflow task by the workflow's own worker, which has the
workspace activities): a few S3 requests each, so a phase transition costs no
activity dispatch and no extra workflow task per operation.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from workflows.carry import SNAPSHOT_PHASE
    from workflows.config_schema import ResolvedConfig
    from workflows.types import (
        ARCHIVE_PHASE,
        LOAD_TODOS,
        READ_MEMORY,
        WRITE_OUTPUT,
        ArchiveRequest,
        LoadTodosRequest,
        LoadTodosResult,
        ReadMemoryRequest,
        WorkspaceRef,
        WriteOutputRequest,
    )


LOCAL_WORKSPACE_OPS = "local-workspace-ops"  # patch: the operations below, local activities
LOCAL_OPERATIONS = {READ_MEMORY, LOAD_TODOS, ARCHIVE_PHASE, WRITE_OUTPUT, SNAPSHOT_PHASE}


class WorkspaceEffects:
    cfg: ResolvedConfig | None
    ws: WorkspaceRef | None

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
        retries = self.cfg.config.retries if self.cfg else None
        options = dict(
            result_type=result_type, summary=summary,
            start_to_close_timeout=timedelta(
                seconds=retries.workspace_timeout_seconds if retries else 60),
            retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2,
                                     maximum_interval=timedelta(seconds=20),
                                     maximum_attempts=retries.workspace_attempts
                                     if retries else 5))
        if name in LOCAL_OPERATIONS and workflow.patched(LOCAL_WORKSPACE_OPS):
            return await workflow.execute_local_activity(name, req, **options)
        return await workflow.execute_activity(name, req, **options)
