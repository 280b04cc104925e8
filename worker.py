"""switchback worker: connect to Temporal, register AgentJob and its activities, run.

Every setting comes from the environment, all optional (the defaults suit the embedded
stack): switchback/environment.py lists them, and `switchback worker --help` prints that
list. `ENV_VARS` below is what this process reads (deploy/ manifests are checked against
it; tests/test_cli_help.py holds the two to each other).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from datetime import timedelta

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker, WorkerDeploymentConfig

from switchback import telemetry
from switchback.activities import app_loader as apps
from switchback.activities.storage.payloads import payload_settings
from switchback.activities.storage.s3 import S3Store, StorageUnavailable
from switchback.activities.tools import mcp_config
from switchback.activities.tools.mcp_sessions import McpServers
from switchback.activities.tools.packages import load_errors
from switchback.operate.client import Target, TemporalUnreachable, connect, target
from switchback.worker_parts import (
    ROLES,
    SearchAttributesMissing,
    WorkerParts,
    close_apps,
    ensure_search_attributes,
    local_model_calls,
)
from switchback.workflows.contract import TASK_QUEUE

__all__ = ["ROLES", "build_worker", "build_workers", "local_model_calls"]
log = logging.getLogger("switchback.worker")


ENV_VARS = [  # what this module reads; deploy/ manifests are checked against it
    "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_PROFILE",
    "SWITCHBACK_TASK_QUEUE", "SWITCHBACK_CONFIG_DIR", "SWITCHBACK_WORKER_ROLE",
    "SWITCHBACK_MODEL_TASK_QUEUE", "SWITCHBACK_TOOL_TASK_QUEUE",
    "SWITCHBACK_MAX_CONCURRENT_ACTIVITIES", "SWITCHBACK_MAX_CONCURRENT_WORKFLOW_TASKS",
    "SWITCHBACK_MAX_CACHED_WORKFLOWS", "SWITCHBACK_STICKY_TIMEOUT_SECONDS",
    "SWITCHBACK_UVLOOP", "SWITCHBACK_LOG_LEVEL", "SWITCHBACK_SEARCH_ATTRIBUTES",
    "SWITCHBACK_S3_ADDRESSING", "TEMPORAL_DEPLOYMENT_NAME", "TEMPORAL_WORKER_BUILD_ID",
    "SWITCHBACK_DEPLOYMENT_NAME", "SWITCHBACK_BUILD_ID",
    "SWITCHBACK_PAYLOAD_BUCKET", "SWITCHBACK_PAYLOAD_THRESHOLD", "SWITCHBACK_CODEC_KEYS",
    "SWITCHBACK_WORKSPACE_BUCKETS", "SWITCHBACK_DOCUMENT_ROOTS", "SWITCHBACK_ENDPOINTS_FILE",
    "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
    "OPENAI_BASE_URL", "OPENAI_API_KEY", "SWITCHBACK_GRACEFUL_SHUTDOWN_SECONDS",
    "AWS_DEFAULT_REGION", "TIKTOKEN_CACHE_DIR",
    "TEMPORAL_TLS", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_CONFIG_FILE",
    "SWITCHBACK_GRAPH_PATH", "SWITCHBACK_GRAPH_SEED", "NEO4J_URI", "NEO4J_USER",
    "NEO4J_PASSWORD", "NEO4J_DATABASE", "SWITCHBACK_WEB_SEARCH_URL", "SWITCHBACK_WEB_SEARCH_KEY",
    "SWITCHBACK_MCP_FILE", "SWITCHBACK_LOCAL_MODEL_CALLS",
    *telemetry.ENV_VARS,
]


# Worker Deployment Versioning: Temporal's names (the Worker Controller sets them), then the
# names switchback read before
VERSION_VARIABLES = (("TEMPORAL_DEPLOYMENT_NAME", "SWITCHBACK_DEPLOYMENT_NAME"),
                     ("TEMPORAL_WORKER_BUILD_ID", "SWITCHBACK_BUILD_ID"))


def _version_setting(name: str, old: str) -> tuple[str, str]:
    """(value, the variable it came from): Temporal's name first, else the old one."""
    value, before = (os.environ.get(v, "").strip() for v in (name, old))
    if value and before and before != value:
        log.warning("%s=%s is not used: %s=%s is set", old, before, name, value)
    return (value, name) if value else (before, old if before else "")


def deployment_from_env() -> dict:
    """Worker Deployment Versioning (docs/versioning.md): with TEMPORAL_DEPLOYMENT_NAME and
    TEMPORAL_WORKER_BUILD_ID set (or SWITCHBACK_DEPLOYMENT_NAME and SWITCHBACK_BUILD_ID, the
    old names), the worker is that version of that deployment and every job it starts is
    pinned to it (a job finishes on the code it started with; new jobs go to the
    deployment's current version). Unset: unversioned."""
    (name, name_from), (build, build_from) = (_version_setting(*v) for v in VERSION_VARIABLES)
    if not name and not build:
        return {}
    if not (name and build):
        lacking = "a build id" if name else "a deployment name"
        raise SystemExit(f"switchback worker: {name_from or build_from} is set but "
                         f"{lacking} is not: set both TEMPORAL_DEPLOYMENT_NAME and "
                         "TEMPORAL_WORKER_BUILD_ID (Worker Deployment Versioning), or neither")
    return {"deployment_config": WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(deployment_name=name, build_id=build),
        use_worker_versioning=True, default_versioning_behavior=VersioningBehavior.PINNED)}


def tuning_from_env() -> dict:
    """Worker options from SWITCHBACK_MAX_* variables (unset: the SDK's defaults)."""
    names = {"SWITCHBACK_MAX_CONCURRENT_ACTIVITIES": "max_concurrent_activities",
             "SWITCHBACK_MAX_CONCURRENT_WORKFLOW_TASKS": "max_concurrent_workflow_tasks",
             "SWITCHBACK_MAX_CACHED_WORKFLOWS": "max_cached_workflows"}
    options: dict = {opt: int(os.environ[var]) for var, opt in names.items()
                     if os.environ.get(var)}
    # a workflow task left on a dead worker's sticky queue goes to the normal queue after
    # this (the SDK's default is 10 s; a retried activity resets stickiness at once anyway)
    options["sticky_queue_schedule_to_start_timeout"] = timedelta(
        seconds=float(os.environ.get("SWITCHBACK_STICKY_TIMEOUT_SECONDS") or 5))
    if os.environ.get("SWITCHBACK_GRACEFUL_SHUTDOWN_SECONDS"):  # let tool calls finish on SIGTERM
        options["graceful_shutdown_timeout"] = timedelta(
            seconds=float(os.environ["SWITCHBACK_GRACEFUL_SHUTDOWN_SECONDS"]))
    return options


def build_workers(client: Client, task_queue: str, s3: S3Store, role: str = "all",
                  mcp: McpServers | None = None, **options) -> tuple[list[Worker], list]:
    """The workers of one process (switchback.worker_parts.WorkerParts): role "all" runs workflows
    and every activity on `task_queue`, plus the model / tool queues when they are set;
    "workflows", "model" or "tools" only that part. `mcp`: the MCP servers tool activities
    use (default: SWITCHBACK_MCP_FILE's). The second value: what to close at the end."""
    parts = WorkerParts(s3, client.data_converter.payload_codec is not None, mcp)
    try:
        plan = parts.plan(task_queue, role, os.environ.get("SWITCHBACK_MODEL_TASK_QUEUE"),
                          os.environ.get("SWITCHBACK_TOOL_TASK_QUEUE"))
    except ValueError as e:
        raise SystemExit(str(e)) from None
    workers = [Worker(client, task_queue=q, workflows=w, activities=a,
                      interceptors=parts.interceptors(), **options)
               for q, (w, a) in plan.items()]
    return workers, [parts]


def build_worker(client: Client, task_queue: str, s3: S3Store, **options) -> tuple[Worker, list]:
    """One worker running everything on one queue (tests, benchmarks)."""
    workers, closers = build_workers(client, task_queue, s3, **options)
    return workers[0], closers


async def main() -> None:
    telemetry.configure_logging()
    versioning = deployment_from_env()  # settings first: a wrong one fails before any I/O
    try:
        s3 = S3Store()
    except ValueError as e:  # a setting the environment got wrong (SWITCHBACK_S3_ADDRESSING)
        raise SystemExit(f"switchback worker: {e}") from None
    try:
        await s3.ensure_bucket(payload_settings()[0])
    except (StorageUnavailable, ApplicationError) as e:
        store = s3.endpoint_url or "AWS S3"
        raise SystemExit(f"switchback worker: S3 ({store}): {' '.join(str(e).split())[:300]}"
                         ) from None
    where = target()
    if where.defaulted:  # said, not assumed: 127.0.0.1:7233 is only the dev server's
        print(f"switchback worker: no TEMPORAL_ADDRESS and no profile address: connecting to "
              f"{where.address}", file=sys.stderr, flush=True)
    try:
        client = await connect(s3, telemetry.runtime_from_env())
    except TemporalUnreachable as e:
        raise SystemExit(f"switchback worker: {e}") from None
    await check_namespace(client, where)
    task_queue = os.environ.get("SWITCHBACK_TASK_QUEUE", TASK_QUEUE)
    role = os.environ.get("SWITCHBACK_WORKER_ROLE", "all")
    if role in ("all", "workflows"):  # the workers whose jobs upsert them
        try:
            await ensure_search_attributes(client)
        except SearchAttributesMissing as e:
            raise SystemExit(f"switchback worker: {e}") from None
    try:
        mcp = McpServers(mcp_config.load())
    except mcp_config.McpConfigError as e:
        raise SystemExit(f"switchback worker: {e}") from None
    workers, closers = build_workers(client, task_queue, s3, role, mcp, **tuning_from_env(),
                                     **versioning)
    if role in ("all", "tools"):
        await report_tools(mcp)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with contextlib.AsyncExitStack() as stack:
            for w in workers:
                await stack.enter_async_context(w)
            queues = ", ".join(f"'{w.task_queue}'" for w in workers)
            print(f"switchback worker started: role {role}, task queues {queues} on "
                  f"{where}", flush=True)
            await stop.wait()
    except RuntimeError as e:  # the SDK's "Worker validation failed: ..." and the like
        raise SystemExit(f"switchback worker: on {where}: {' '.join(str(e).split())[:300]}"
                         ) from None
    for c in closers:
        await c.close()
    await close_apps()
    s3.close()
    telemetry.shutdown()


async def check_namespace(client: Client, where: Target) -> None:
    """A namespace the server does not have ends the worker in one line that says where
    the name came from (other failures to look: the worker's own validation speaks)."""
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=client.namespace))
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            raise SystemExit(f"switchback worker: namespace '{where.namespace}' "
                             f"({where.namespace_from}) not found on {where.address} "
                             f"({where.address_from})") from None


async def report_tools(mcp: McpServers) -> None:
    """At start: each MCP server started and listed (or why not), tool packages that do not
    load. A broken one is an error line naming it; the worker goes on with the others."""
    for error in (*load_errors(), *apps.load_errors()):
        print(f"switchback worker: ERROR: {error}", flush=True)
    for name, problem in (await mcp.check()).items():
        print(f"switchback worker: ERROR: {problem}" if problem
              else f"switchback worker: MCP server '{name}' ready", flush=True)


def run_loop(coro) -> None:
    """uvloop where it is installed (measured: about a quarter less worker CPU per step);
    SWITCHBACK_UVLOOP=0 keeps asyncio's own loop."""
    if os.environ.get("SWITCHBACK_UVLOOP", "1") != "0":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            uvloop.run(coro)
            return
    asyncio.run(coro)


if __name__ == "__main__":
    run_loop(main())
