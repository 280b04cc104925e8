"""A job's start as local activities (short jobs start fast).

Before the first model call a job loads its config, creates its workspace and lists its
tools. As activities, each would cost a round trip through the server (scheduled, started,
completed, and a workflow task to schedule the next: six events and ~10-30 ms each on the
dev server). As local activities they run one after the other in the job's first workflow
task, on the worker that runs the workflow, which registers all three (worker.py: the
`workflows` role carries `load_config`, `create_workspace` and the tool activities too):
three markers in history instead of eighteen events, and the first model call is scheduled
with the first workflow task's answer.

`list_tools` stays an activity when the config sends tool activities to their own queue
(`task_queues.tools`): the MCP servers live on that queue's workers.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.contract import (
        CREATE_WORKSPACE,
        LIST_TOOLS,
        LOAD_CONFIG,
        LoadConfigRequest,
        ResolvedConfig,
    )
    from switchback.workflows.failures import is_activity_failure

LOCAL_START_ACTIVITIES = {LOAD_CONFIG, CREATE_WORKSPACE, LIST_TOOLS}


def local(name: str, tools_queue: str | None = None) -> bool:
    """Does this job run start activity `name` as a local activity?"""
    if name not in LOCAL_START_ACTIVITIES or (name == LIST_TOOLS and tools_queue):
        return False
    return True


async def execute(name: str, req: Any, result_type: type, *, summary: str,
                  start_to_close_timeout: timedelta, retry_policy: RetryPolicy,
                  task_queue: str | None = None) -> Any:
    """One start activity: local, or through the server (`list_tools` on a separate tools
    queue)."""
    if local(name, task_queue):
        return await workflow.execute_local_activity(
            name, req, result_type=result_type, summary=summary,
            start_to_close_timeout=start_to_close_timeout, retry_policy=retry_policy)
    return await workflow.execute_activity(
        name, req, result_type=result_type, summary=summary, task_queue=task_queue,
        start_to_close_timeout=start_to_close_timeout, retry_policy=retry_policy)


def failed(e: BaseException) -> bool:
    """`e` is a start activity's failure (local or not, not a cancellation): the job is
    refused."""
    return is_activity_failure(e)


async def load_config(config: Any) -> ResolvedConfig:
    """The job's config, resolved by `load_config` (config files live on the worker)."""
    cfg: ResolvedConfig = await execute(
        LOAD_CONFIG, LoadConfigRequest(config=config), ResolvedConfig, summary="load config",
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=RetryPolicy(maximum_attempts=5))
    return cfg


def with_deliverables(cfg: ResolvedConfig, deliverables: list[str]) -> ResolvedConfig:
    """The config with the job input's deliverables joined to its own."""
    if not deliverables:
        return cfg
    c = cfg.config
    return cfg.model_copy(update={"config": c.model_copy(update={
        "deliverables": list(dict.fromkeys(c.deliverables + deliverables))})})
