"""switchback in your own worker: the Temporal SDK's plugin interface.

    from temporalio.client import Client
    from temporalio.worker import Worker
    from switchback.plugin import SwitchbackPlugin

    client = await Client.connect("localhost:7233", plugins=[SwitchbackPlugin()])
    worker = Worker(client, task_queue="my-app", workflows=[MyWorkflow], activities=[...])

`SwitchbackPlugin` is the two halves below in one, for a client whose workers run jobs:

- `SwitchbackClientPlugin` (a client that starts jobs, reads their results): the client's
  data converter with only what switchback needs changed (switchback/converter.py): its
  payload converter becomes pydantic's, its codec and failure converter stay; payloads
  above the threshold go to S3 unless it has external storage of its own.
- `SwitchbackWorkerPlugin` (every worker of a client it is on, or one `Worker(...,
  plugins=[...])`): `AgentJob` and the installed apps' workflows, every activity they run,
  on that worker's queue - one of them a dynamic activity (a job's tools run as
  `tool.<name>`), so the worker can register no dynamic activity of its own; switchback's
  worker interceptors and its metrics and log-context interceptor
  (telemetry.tracing.SwitchbackActivityInterceptor, on switchback's activities only: the
  `switchback_*` metrics when the client's Runtime exports metrics); the sandbox passes
  switchback's non-workflow modules through. Before a worker runs it checks the namespace's
  search attributes (adding the missing ones where it may) and the payload bucket; when the
  client's last such worker stops it closes the model clients and MCP servers. A Replayer
  given the plugin replays AgentJob histories.

Importing this module imports none of switchback's engine, so a workflow module may import
it under the workflow sandbox; the engine loads when a plugin is made (outside workflows).
The operator's settings come from the environment as for `worker.py` (docs/operating.md);
examples/adopter is a project that does this. worker.py runs the same parts
(switchback.worker_parts.WorkerParts) split by role.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from temporalio import activity
from temporalio.client import ClientConfig
from temporalio.converter import DataConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import Interceptor, ReplayerConfig, Worker, WorkerConfig, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

if TYPE_CHECKING:
    from switchback.activities.storage.s3 import S3Store
    from switchback.activities.tools.mcp_sessions import McpServers

# switchback's modules that hold no workflow code: the sandbox takes them from the worker's
# process instead of loading them again for each workflow (switchback.workflows is loaded
# afresh, as workflow code must be). The sandbox matches a name and every prefix of it, so
# `switchback` itself is not listed: that would pass switchback.workflows through too.
PASSTHROUGH = tuple(f"switchback.{m}" for m in (
    "activities", "codec", "telemetry", "operate", "apps", "tools", "converter", "environment",
    "plugin", "scoped", "worker_parts"))


def workflow_runner(runner: WorkflowRunner | None) -> WorkflowRunner:
    """The worker's runner; a sandboxed one with switchback's modules passed through."""
    if runner is None:
        runner = SandboxedWorkflowRunner()
    if not isinstance(runner, SandboxedWorkflowRunner):
        return runner  # the user's own choice (e.g. UnsandboxedWorkflowRunner)
    return dataclasses.replace(
        runner, restrictions=runner.restrictions.with_passthrough_modules(*PASSTHROUGH))


class SwitchbackClientPlugin(SimplePlugin):
    """The client's data converter with what switchback needs (module docstring). `s3`: where
    large payloads go (default: the S3 store the environment names)."""

    def __init__(self, s3: S3Store | None = None) -> None:
        from switchback.activities.storage.s3 import S3Store

        self.s3 = s3 or S3Store()
        super().__init__("switchback.SwitchbackClientPlugin", data_converter=self.converter)

    def converter(self, existing: DataConverter | None) -> DataConverter:
        from switchback.converter import compose

        return compose(existing, self.s3)


class SwitchbackWorkerPlugin(SimplePlugin):
    """switchback's workflows, activities and interceptors on each worker (module
    docstring). `s3`: the workspace store (default: from the environment); `mcp`: the MCP
    servers tools may use (default: SWITCHBACK_MCP_FILE's)."""

    def __init__(self, s3: S3Store | None = None, mcp: McpServers | None = None) -> None:
        from switchback.activities.storage.s3 import S3Store
        from switchback.worker_parts import WorkerParts

        self.s3 = s3 or S3Store()
        self.parts = WorkerParts(self.s3, False, mcp)
        self._running = 0  # workers of this plugin running now
        super().__init__("switchback.SwitchbackWorkerPlugin", workflow_runner=workflow_runner)

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """The runner (base class), then switchback's parts for this worker's client."""
        from temporalio.contrib.pydantic import PydanticPayloadConverter

        config = super().configure_worker(config)
        client = config["client"]
        converter = client.data_converter
        if not issubclass(converter.payload_converter_class, PydanticPayloadConverter):
            raise ValueError("switchback's worker plugin needs a client with a pydantic "
                             "payload converter: put SwitchbackPlugin (or "
                             "SwitchbackClientPlugin) on the client")
        own = config.get("activities", ())
        ((workflows, activities),) = self.parts.plan(
            config.get("task_queue") or "", encrypted=converter.payload_codec is not None
        ).values()
        config["workflows"] = [*config.get("workflows", ()), *workflows]
        config["activities"] = [*own, *activities]
        known = [*client.config().get("interceptors", ()), *config.get("interceptors", ())]
        config["interceptors"] = [*config.get("interceptors", ()),
                                  *self._interceptors(own, known)]
        return config

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        """AgentJob and the apps' workflows, and the runner (switchback's interceptors are
        all activity interceptors: a replay runs no activity)."""
        config = super().configure_replayer(config)
        ((workflows, _),) = self.parts.plan("(replay)").values()
        config["workflows"] = [*config.get("workflows", ()), *workflows]
        return config

    def _interceptors(self, own: Sequence[Callable], known: Sequence[Any]) -> list[Any]:
        """switchback's activity interceptors, and its metrics and log context unless the
        client has them already, for every activity but the worker's own (`own`)."""
        from switchback.scoped import NotFor
        from switchback.telemetry.tracing import SwitchbackActivityInterceptor

        found: list[Interceptor] = [*self.parts.interceptors()]
        if not any(isinstance(i, SwitchbackActivityInterceptor) for i in known):
            found.append(SwitchbackActivityInterceptor())
        types = {d.name for d in map(activity._Definition.from_callable, own)
                 if d is not None and d.name}
        return [NotFor(i, types) for i in found]

    async def run_worker(self, worker: Worker,
                         next: Callable[[Worker], Awaitable[None]]) -> None:
        """Check the namespace's search attributes, run; when the last of the client's
        workers stops, close what the jobs used (model clients, MCP servers)."""
        from switchback.activities.storage.payloads import payload_settings
        from switchback.worker_parts import close_apps, ensure_search_attributes

        await ensure_search_attributes(worker.client)
        await self.s3.ensure_bucket(payload_settings()[0])  # large payloads go there
        self._running += 1
        try:
            await next(worker)
        finally:
            self._running -= 1
            if not self._running:
                await self.parts.close()
                await close_apps()


class SwitchbackPlugin(SimplePlugin):
    """Both halves on one client: its converter, and switchback's parts on every worker of
    it (module docstring). `s3`: the workspace store and where large payloads go (default:
    from the environment); `mcp`: the MCP servers tools may use."""

    def __init__(self, s3: S3Store | None = None, mcp: McpServers | None = None) -> None:
        self.worker_plugin = SwitchbackWorkerPlugin(s3, mcp)
        self.client_plugin = SwitchbackClientPlugin(self.worker_plugin.s3)
        self.s3, self.parts = self.worker_plugin.s3, self.worker_plugin.parts
        super().__init__("switchback.SwitchbackPlugin")

    def configure_client(self, config: ClientConfig) -> ClientConfig:
        return self.client_plugin.configure_client(config)

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        return self.worker_plugin.configure_worker(config)

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        return self.worker_plugin.configure_replayer(
            self.client_plugin.configure_replayer(config))

    async def run_worker(self, worker: Worker,
                         next: Callable[[Worker], Awaitable[None]]) -> None:
        await self.worker_plugin.run_worker(worker, next)


__all__ = ["PASSTHROUGH", "SwitchbackClientPlugin", "SwitchbackPlugin", "SwitchbackWorkerPlugin",
           "workflow_runner"]
