"""switchback worker: connect to Temporal, register AgentJob and its activities, run.

Environment (all optional; defaults suit the embedded stack):
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_PROFILE, ...
      Temporal's standard client configuration (env vars and profiles)
  SWITCHBACK_TASK_QUEUE      task queue to poll (default: switchback)
  SWITCHBACK_CONFIG_DIR      configs directory (default: ./configs of this checkout)
  SWITCHBACK_WORKER_ROLE     all (default) | workflows | model | tools: what this process runs
  SWITCHBACK_MODEL_TASK_QUEUE, SWITCHBACK_TOOL_TASK_QUEUE
      the queues of model and tool activities when jobs use separate ones (config
      `task_queues`); a `model` / `tools` worker polls only that queue
  SWITCHBACK_MAX_CONCURRENT_ACTIVITIES, SWITCHBACK_MAX_CONCURRENT_WORKFLOW_TASKS,
  SWITCHBACK_MAX_CACHED_WORKFLOWS   worker tuning (sticky cache 0 forces replay of every task)
  SWITCHBACK_STICKY_TIMEOUT_SECONDS  sticky schedule-to-start timeout (default 5)
  SWITCHBACK_UVLOOP          0: asyncio's own event loop instead of uvloop
  SWITCHBACK_LOCAL_MODEL_CALLS  0: no job's model call runs as a local activity (default: on
      role `all` workers, those of jobs that opt in may; set 0 where workflow workers of the
      queue lack call_model)
  SWITCHBACK_GRACEFUL_SHUTDOWN_SECONDS  on SIGTERM, let running activities finish this long
  SWITCHBACK_DEPLOYMENT_NAME, SWITCHBACK_BUILD_ID   Worker Deployment Versioning: this
      worker is that version; the jobs it starts are pinned to it (docs/versioning.md)
  SWITCHBACK_SEARCH_ATTRIBUTES  off: no job upserts search attributes (default on: the
      worker checks the namespace has them, adding what it may)
  SWITCHBACK_GRAPH_PATH / NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD   the validator's graph
  SWITCHBACK_WEB_SEARCH_URL, SWITCHBACK_WEB_SEARCH_KEY            the web_search tool
  SWITCHBACK_MCP_FILE        the MCP servers this worker offers (default: <configs>/mcp.yaml)
  AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION
      the S3-compatible workspace store
  SWITCHBACK_PAYLOAD_BUCKET, SWITCHBACK_PAYLOAD_THRESHOLD
      where payloads above the threshold go instead of history (0: off)
  SWITCHBACK_WORKSPACE_BUCKETS  the buckets a job config may choose (default: switchback;
      never the payload bucket)
  SWITCHBACK_DOCUMENT_ROOTS  local folders job input may name documents from (':' or ','
      separated; default none: documents come inline or from the job's config folder)
  SWITCHBACK_CODEC_KEYS      id:base64key,... - AES-GCM payload encryption (codec/; off if unset)
  SWITCHBACK_ENDPOINTS_FILE  the model endpoints jobs may name (default configs/endpoints.yaml)
  OPENAI_BASE_URL, OPENAI_API_KEY     the `default` endpoint (and the variables endpoints.yaml
      names for other endpoints)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from datetime import timedelta

from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker, WorkerDeploymentConfig

import telemetry
from activities import app_loader as apps
from activities.storage.payloads import payload_settings
from activities.storage.s3 import S3Store, StorageUnavailable
from activities.tools import mcp_config
from activities.tools.mcp_sessions import McpServers
from activities.tools.packages import load_errors
from operate.client import connect
from switchback.worker_parts import (
    ROLES,
    SearchAttributesMissing,
    WorkerParts,
    close_apps,
    ensure_search_attributes,
    local_model_calls,
)
from workflows.contract import TASK_QUEUE

__all__ = ["ROLES", "build_worker", "build_workers", "local_model_calls"]


ENV_VARS = [  # what this module reads; deploy/ manifests are checked against it
    "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_PROFILE",
    "SWITCHBACK_TASK_QUEUE", "SWITCHBACK_CONFIG_DIR", "SWITCHBACK_WORKER_ROLE",
    "SWITCHBACK_MODEL_TASK_QUEUE", "SWITCHBACK_TOOL_TASK_QUEUE",
    "SWITCHBACK_MAX_CONCURRENT_ACTIVITIES", "SWITCHBACK_MAX_CONCURRENT_WORKFLOW_TASKS",
    "SWITCHBACK_MAX_CACHED_WORKFLOWS", "SWITCHBACK_STICKY_TIMEOUT_SECONDS",
    "SWITCHBACK_UVLOOP", "SWITCHBACK_LOG_LEVEL", "SWITCHBACK_SEARCH_ATTRIBUTES",
    "SWITCHBACK_S3_ADDRESSING", "SWITCHBACK_DEPLOYMENT_NAME", "SWITCHBACK_BUILD_ID",
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


def deployment_from_env() -> dict:
    """Worker Deployment Versioning (docs/versioning.md): with SWITCHBACK_DEPLOYMENT_NAME and
    SWITCHBACK_BUILD_ID set, the worker is that version of that deployment and every job it
    starts is pinned to it (a job finishes on the code it started with; new jobs go to the
    deployment's current version). Unset: unversioned, as before."""
    name = os.environ.get("SWITCHBACK_DEPLOYMENT_NAME", "").strip()
    build = os.environ.get("SWITCHBACK_BUILD_ID", "").strip()
    if not name and not build:
        return {}
    if not (name and build):
        raise SystemExit("switchback worker: set both SWITCHBACK_DEPLOYMENT_NAME and "
                         "SWITCHBACK_BUILD_ID (Worker Deployment Versioning), or neither")
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
        where = s3.endpoint_url or "AWS S3"
        raise SystemExit(f"switchback worker: S3 ({where}): {' '.join(str(e).split())[:300]}"
                         ) from None
    try:
        client = await connect(s3, telemetry.runtime_from_env())
    except RuntimeError as e:  # the client's connection error
        where = os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233")
        raise SystemExit(f"switchback worker: cannot reach Temporal at {where}: "
                         f"{' '.join(str(e).split())[:300]}") from None
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
    async with contextlib.AsyncExitStack() as stack:
        for w in workers:
            await stack.enter_async_context(w)
        queues = ", ".join(f"'{w.task_queue}'" for w in workers)
        print(f"switchback worker started: role {role}, task queues {queues} on "
              f"{client.service_client.config.target_host}", flush=True)
        await stop.wait()
    for c in closers:
        await c.close()
    await close_apps()
    s3.close()
    telemetry.shutdown()


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
