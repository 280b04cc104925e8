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

A child of a `nested` job works in `<parent id>/subjobs/<child id>/`. Nothing the job's
input or its workflow code says is taken for it: `check_parent` asks Temporal (the worker's
own client) who started the activity's workflow run, and lets the child in only if that is
an AgentJob with the parent's id, and the parent's prefix belongs to that job's first run
(its `.switchback/owner.json`). A job started by hand with a crafted id or config, a
child of some other workflow that borrows a job's id, or a reused parent id gets nothing.
"""

from __future__ import annotations

import os

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from switchback.activities.app_loader import coordinator_types
from switchback.activities.storage.ownership import check_owner, owner
from switchback.activities.storage.payloads import payload_settings
from switchback.activities.storage.s3 import S3Store
from switchback.workflows.contract import CREATE_WORKSPACE, WORKFLOW_TYPE, WorkspaceRef, layout

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


def check_workspace(ws: WorkspaceRef) -> str | None:
    """Raise a non-retryable error unless `ws` is this activity's own job's workspace, or
    may be: a child's folder in its parent's workspace, whose parent `check_parent` checks
    (returned: the parent job id)."""
    why = bucket_problem(ws.bucket)
    if why:
        raise ApplicationError(f"workspace.bucket: {why}", type="BucketNotAllowed",
                               non_retryable=True)
    try:
        info = activity.info()
    except RuntimeError:
        return None  # called outside an activity (tests of the pieces)
    own = info.workflow_id
    if not own or ws.job_id == own:
        return None
    if info.workflow_type in coordinator_types() and ws.job_id.startswith(f"{own}-") \
            and "/" not in ws.job_id:
        return None  # an app's coordinator (the document pipeline) reads its jobs' outputs
    nested = layout.split_subjob(ws.job_id)
    if nested is not None and nested[1] == own and info.workflow_type == WORKFLOW_TYPE:
        return nested[0]
    raise _refused(f"job {own!r} may not touch the workspace of job {ws.job_id!r}")


def _refused(what: str) -> ApplicationError:
    return ApplicationError(what, type="PrefixNotAllowed", non_retryable=True)


_parents: set[tuple[str, str, str, str]] = set()  # (bucket, child, child run, parent) checked


async def check_parent(s3: S3Store | None, ws: WorkspaceRef, parent: str) -> None:
    """Let this activity's workflow into `<parent>/subjobs/<its id>/` only if Temporal says
    it is a child of the AgentJob `parent`, whose prefix belongs to that job's first run."""
    info = activity.info()
    child, run = info.workflow_id or "", info.workflow_run_id or ""
    key = (ws.bucket, child, run, parent)
    if key in _parents:
        return
    where = f"job {child!r} may not work in {layout.prefix(ws.job_id)}"
    if s3 is None:
        raise _refused(f"{where}: this worker cannot check parent jobs")
    client = activity.client()
    try:
        me = await client.get_workflow_handle(child, run_id=run).describe()
        if me.parent_id != parent:
            raise _refused(f"{where}: it is not a child of job {parent!r} (its parent: "
                           f"{me.parent_id or 'none'})")
        up = await client.get_workflow_handle(parent, run_id=me.parent_run_id).describe()
    except RPCError as e:
        if e.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            raise _refused(f"{where}: {e.message}") from None
        raise  # the server is busy or away: retried
    if up.workflow_type != WORKFLOW_TYPE:
        raise _refused(f"{where}: its parent is a {up.workflow_type}, not an {WORKFLOW_TYPE}")
    first = up.raw_info.first_run_id or up.run_id
    found = await owner(s3, WorkspaceRef(bucket=ws.bucket, job_id=parent))
    if not found or found.get("run_id") != first:
        raise _refused(f"{where}: s3://{ws.bucket}/{layout.prefix(parent)} does not belong to "
                       f"its parent (run {first})")
    _parents.add(key)


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
            await guard_workspace(self.s3, ws, activity.info().activity_type)
        return await super().execute_activity(input)


async def guard_workspace(s3: S3Store | None, ws: WorkspaceRef, activity_type: str) -> None:
    """What WorkspaceGuard checks of one workspace an activity was given; an activity whose
    input arrives undecoded (tools/run.py's `tool.<name>`) calls it once it has decoded it."""
    parent = check_workspace(ws)
    if parent is not None:
        await check_parent(s3, ws, parent)
    if s3 is not None and activity_type != CREATE_WORKSPACE:
        await check_owner(s3, ws)
