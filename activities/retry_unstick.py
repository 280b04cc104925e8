"""After a worker dies mid-activity, send the job's next workflow task to a live worker at once.

Temporal hands a workflow's tasks to the worker that ran its last one (its sticky queue).
When that worker is killed, the activity it was running is retried elsewhere after its
heartbeat timeout; but the workflow task that follows the retried activity still goes to
the dead worker's sticky queue and waits there for the sticky schedule-to-start timeout
(10 s in the Python SDK) before the server gives it to the normal queue. A retried attempt
is the sign that something went wrong with the previous one, so before it returns the
activity asks the server to drop the job's stickiness (`ResetStickyTaskQueue`): the next
workflow task goes to the normal queue, and any live worker takes it. Costs one RPC per
retried attempt and one workflow task with full history (small: conversations are kept by
reference); first attempts do nothing.
"""

from __future__ import annotations

import logging

from temporalio import activity
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import ResetStickyTaskQueueRequest
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

log = logging.getLogger(__name__)


async def unstick_if_retried() -> None:
    """On a retried attempt, reset the job's stickiness (first attempts: nothing)."""
    info = activity.info()
    if info.attempt <= 1 or info.is_local or not info.workflow_id:
        return
    try:
        client = activity.client()
        await client.workflow_service.reset_sticky_task_queue(ResetStickyTaskQueueRequest(
            namespace=info.workflow_namespace or "", execution=WorkflowExecution(
                workflow_id=info.workflow_id, run_id=info.workflow_run_id or "")))
    except Exception as e:  # an optimisation: the sticky timeout still applies without it
        log.warning("could not reset the sticky queue of %s: %s", info.workflow_id, e)


class UnstickRetries(Interceptor):
    """Worker interceptor: every retried activity attempt resets its job's stickiness."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next)


class _Inbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput):
        await unstick_if_retried()
        return await super().execute_activity(input)
