"""Which buckets and prefixes a job's activities may touch.

The operator lists the workspace buckets (`SWITCHBACK_WORKSPACE_BUCKETS`, comma-separated;
default `switchback`); a job config's `workspace.bucket` picks one of them. The payload
bucket (`SWITCHBACK_PAYLOAD_BUCKET`), where every job's large Temporal payloads are kept,
is never a workspace, even if listed.

`load_config` checks the bucket early, naming the field. `WorkspaceGuard`, a worker
interceptor, checks every activity that receives a workspace (`WorkspaceRef`, or a request
with a `workspace`), whoever built it - a continued or rerun job carries its config, and
the carried config is job input too: the bucket must be listed, the prefix must be the
job's own (a DocumentPipeline reads its child jobs' outputs, `<pipeline id>-...`) and
belong to the job's first run (a hand-made carry under a reused job id is refused).
"""

from __future__ import annotations

import os

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from activities.storage.ownership import check_owner
from activities.storage.payloads import payload_settings
from activities.storage.s3 import S3Store
from workflows.contract import CREATE_WORKSPACE, PIPELINE_TYPE, WorkspaceRef

DEFAULT_BUCKETS = "switchback"


def workspace_buckets() -> list[str]:
    listed = os.environ.get("SWITCHBACK_WORKSPACE_BUCKETS") or DEFAULT_BUCKETS
    return [b.strip() for b in listed.split(",") if b.strip()]


def bucket_problem(bucket: object) -> str | None:
    """Why `bucket` may not hold a workspace (None: it may)."""
    allowed = [b for b in workspace_buckets() if b != payload_settings()[0]]
    if bucket == payload_settings()[0]:
        return (f"{bucket!r} is the payload bucket (SWITCHBACK_PAYLOAD_BUCKET), never a "
                f"workspace; the operator's workspace buckets: {', '.join(allowed) or 'none'}")
    if bucket not in allowed:
        return (f"{bucket!r} is not a workspace bucket the operator listed "
                f"(SWITCHBACK_WORKSPACE_BUCKETS: {', '.join(allowed) or 'none'})")
    return None


def check_workspace(ws: WorkspaceRef) -> None:
    """Raise a non-retryable error unless `ws` is this activity's own job's workspace."""
    why = bucket_problem(ws.bucket)
    if why:
        raise ApplicationError(f"workspace.bucket: {why}", type="BucketNotAllowed",
                               non_retryable=True)
    try:
        info = activity.info()
    except RuntimeError:
        return  # called outside an activity (tests of the pieces)
    own = info.workflow_id
    if not own or ws.job_id == own:
        return
    if info.workflow_type == PIPELINE_TYPE and ws.job_id.startswith(f"{own}-"):
        return  # a pipeline reads its child jobs' outputs
    raise ApplicationError(f"job {own!r} may not touch the workspace of job {ws.job_id!r}",
                           type="PrefixNotAllowed", non_retryable=True)


def workspaces_in(args: object) -> list[WorkspaceRef]:
    found = []
    for a in args if isinstance(args, list | tuple) else [args]:
        ws = a if isinstance(a, WorkspaceRef) else getattr(a, "workspace", None)
        if isinstance(ws, WorkspaceRef):
            found.append(ws)
    return found


class WorkspaceGuard(Interceptor):
    """Worker interceptor: every activity's workspaces checked before it runs - the bucket,
    the prefix, and (with `s3`) that the prefix belongs to the job's first run
    (storage/ownership.py; create_workspace claims it itself)."""

    def __init__(self, s3: S3Store | None = None) -> None:
        self.s3 = s3

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next, self.s3)


class _Inbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, s3: S3Store | None) -> None:
        super().__init__(next)
        self.s3 = s3

    async def execute_activity(self, input: ExecuteActivityInput):
        for ws in workspaces_in(input.args):
            check_workspace(ws)
            if self.s3 is not None and activity.info().activity_type != CREATE_WORKSPACE:
                await check_owner(self.s3, ws)
        return await super().execute_activity(input)
