"""What switchback runs on a worker: `WorkerParts` (AgentJob, the installed apps' workflows,
every activity they use, the worker interceptors, and what to close at the end), split by
role over separate queues (worker.py) or all on one worker's queue (switchback/plugin.py);
the namespace's search attributes the jobs upsert, checked before a worker starts.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client

from switchback.activities.app_loader import installed_apps
from switchback.activities.attempts import AttemptDeadline
from switchback.activities.config_files import ConfigActivities
from switchback.activities.model.calls import ModelActivities
from switchback.activities.model.verify_call import VerificationActivities
from switchback.activities.retry_unstick import UnstickRetries
from switchback.activities.storage.buckets import WorkspaceGuard
from switchback.activities.storage.completion_check import CompletionCheckActivities
from switchback.activities.storage.conversations import ConversationStore
from switchback.activities.storage.s3 import S3Store
from switchback.activities.storage.snapshots import SnapshotActivities
from switchback.activities.storage.workspace import WorkspaceActivities
from switchback.activities.storage.workspace_restore import RestoreActivities
from switchback.activities.tools import mcp_config
from switchback.activities.tools.listing import ToolListingActivities
from switchback.activities.tools.mcp_sessions import McpServers
from switchback.activities.tools.run import ToolActivities
from switchback.workflows.agent_job import AgentJob
from switchback.workflows.contract import SEARCH_ATTRIBUTES as SEARCH_ATTRIBUTE_TYPES

SEARCH_ATTRIBUTES = {name: getattr(IndexedValueType, f"INDEXED_VALUE_TYPE_{kind.upper()}")
                     for name, kind in SEARCH_ATTRIBUTE_TYPES.items()}
ROLES = ("all", "workflows", "model", "tools")
log = logging.getLogger("switchback.worker")


class SearchAttributesMissing(RuntimeError):
    """The namespace lacks search attributes jobs upsert, and they could not be added."""


def search_attributes_on() -> bool:
    """SWITCHBACK_SEARCH_ATTRIBUTES: "on" (the default) or "off" (every job on this worker
    keeps its progress in the memo only: a namespace without switchback's attributes)."""
    value = os.environ.get("SWITCHBACK_SEARCH_ATTRIBUTES", "on").strip().lower()
    if value not in ("on", "off"):
        raise SearchAttributesMissing(f"SWITCHBACK_SEARCH_ATTRIBUTES={value!r}: give on or off")
    return value == "on"


def create_commands(namespace: str, names: list[str]) -> str:
    """The commands that create `names` on `namespace` (self-hosted and Temporal Cloud)."""
    cli = "; ".join(f"temporal operator search-attribute create --namespace {namespace} "
                    f"--name {n} --type {SEARCH_ATTRIBUTE_TYPES[n]}" for n in names)
    cloud = " ".join(f"--sa '{n}={SEARCH_ATTRIBUTE_TYPES[n]}'" for n in names)
    return f"{cli} (Temporal Cloud: tcld namespace search-attributes add -n {namespace} {cloud})"


async def ensure_search_attributes(client: Client) -> None:
    """Every search attribute a job upserts (workflows/contract/names.py) must exist on the
    namespace: an upsert of an unregistered one fails the workflow task, which Temporal
    retries forever (the job stalls). Missing ones are added where this client may (dev
    server, self-hosted); where it may not (Temporal Cloud), SearchAttributesMissing names
    them and the commands that create them - or the operator turns them off
    (SWITCHBACK_SEARCH_ATTRIBUTES=off)."""
    if not search_attributes_on():
        log.info("search attributes off (SWITCHBACK_SEARCH_ATTRIBUTES): jobs keep their "
                 "progress in the memo only")
        return
    ns = client.namespace
    try:
        have = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=ns))
    except Exception as e:  # noqa: BLE001 - not allowed to look: cannot tell, say so
        log.warning("cannot list the search attributes of namespace '%s' (%s): make sure "
                    "it has %s (%s), or set SWITCHBACK_SEARCH_ATTRIBUTES=off", ns,
                    " ".join(str(e).split())[:200], ", ".join(SEARCH_ATTRIBUTES),
                    create_commands(ns, list(SEARCH_ATTRIBUTES)))
        return
    missing = [k for k in SEARCH_ATTRIBUTES if k not in have.custom_attributes]
    if not missing:
        return
    try:
        await client.operator_service.add_search_attributes(AddSearchAttributesRequest(
            namespace=ns, search_attributes={k: SEARCH_ATTRIBUTES[k] for k in missing}))
    except Exception as e:  # noqa: BLE001 - Cloud, permissions, slots: all say the same
        raise SearchAttributesMissing(
            f"namespace '{ns}' lacks the search attributes "
            f"{', '.join(f'{n} ({SEARCH_ATTRIBUTE_TYPES[n]})' for n in missing)} and they "
            f"could not be added ({' '.join(str(e).split())[:200]}): "
            f"{create_commands(ns, missing)}; or set SWITCHBACK_SEARCH_ATTRIBUTES=off"
        ) from None
    log.info("registered search attributes %s", ", ".join(missing))


def local_model_calls(role: str, model_queue: str | None) -> bool:
    """May this worker's jobs run a fast endpoint's model calls as local activities? Only
    where the workflow worker has call_model itself (role all, no separate model queue),
    unless SWITCHBACK_LOCAL_MODEL_CALLS=0. (A workflow task on a worker without call_model
    fails the local call, and the call goes through the server: model_steps._local_call.)"""
    return (role == "all" and not model_queue
            and os.environ.get("SWITCHBACK_LOCAL_MODEL_CALLS", "1") != "0")


class WorkerParts:
    """What a worker process runs: the workflows and activities of its role, by task queue,
    and what must be closed when it stops."""

    def __init__(self, s3: S3Store, encrypted: bool, mcp: McpServers | None = None) -> None:
        self.s3 = s3
        self.encrypted = encrypted  # the client's payloads go through a codec
        self.model = ModelActivities(ConversationStore(s3))
        self.mcp = mcp if mcp is not None else McpServers(mcp_config.load())

    def plan(self, task_queue: str, role: str = "all", model_queue: str | None = None,
             tool_queue: str | None = None, encrypted: bool | None = None,
             ) -> dict[str, tuple[list[type], list[Callable]]]:
        """queue -> (workflows, activities). `all`: workflows and every activity on
        `task_queue`, plus the model / tool queues when they are set; `workflows`, `model`,
        `tools`: only that part. `encrypted`: whether this worker's client has a codec
        (default: as given when the parts were made)."""
        encrypted = self.encrypted if encrypted is None else encrypted
        if role not in ROLES:
            raise ValueError(f"SWITCHBACK_WORKER_ROLE={role!r}: use all, workflows, model or "
                             "tools")
        s3, model = self.s3, self.model
        model_acts: list[Callable] = [model.call_model, model.summarize_conversation,
                                      VerificationActivities(model).verify_completion]
        tools = ToolActivities(s3, model.store, self.mcp)
        tool_acts: list[Callable] = [tools.run_tool, tools.run_tool_as,
                                     ToolListingActivities(s3, self.mcp).list_tools]
        plan: dict[str, tuple[list[type], list[Callable]]] = {}

        def add(queue: str, workflows: list[type], acts: list[Callable]) -> None:
            w, a = plan.setdefault(queue, ([], []))
            w += workflows
            a += acts
        if role in ("all", "workflows"):
            apps = installed_apps()  # e.g. examples/documents' DocumentPipeline
            add(task_queue, [AgentJob, *(w for app in apps for w in app.workflows)], [
                ConfigActivities(encrypted, local_model_calls(role, model_queue),
                                 search_attributes_on()).load_config,
                *WorkspaceActivities(s3).all(),
                SnapshotActivities(s3).snapshot_phase, RestoreActivities(s3).restore_workspace,
                CompletionCheckActivities(s3).check_completion,
                *(act for app in apps for act in app.activities(s3)),
                *(tool_acts if role == "workflows" or tool_queue else [])])  # tools.local
        for kind, queue, acts in (("model", model_queue, model_acts),
                                  ("tools", tool_queue, tool_acts)):
            if role in ("all", kind):
                add(queue or task_queue, [], acts)
        return plan

    def interceptors(self) -> list[Any]:
        return [AttemptDeadline(), UnstickRetries(), WorkspaceGuard(self.s3)]

    async def close(self) -> None:
        """The model clients and MCP servers (the apps' own resources: `close_apps`, once,
        when the process is done with every worker)."""
        await self.model.close()
        await self.mcp.close()


async def close_apps() -> None:
    """Each installed app's `close` (the document app: its graph store); one that fails is
    logged and the others still close."""
    for app in installed_apps():
        if app.close is not None:
            try:
                await app.close()
            except Exception:
                log.exception("app %s: close failed", app.name)
