"""Worker Deployment Versioning on the dev server: a job started on version A is pinned to
it and finishes there while B, made current meanwhile, takes every new job - the upgrade
path docs/versioning.md describes (worker.py: Temporal's TEMPORAL_DEPLOYMENT_NAME and
TEMPORAL_WORKER_BUILD_ID, as the Worker Controller sets them; the old SWITCHBACK_* names still
read; jobs pinned)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.enums.v1 import VersioningBehavior as Behavior
from temporalio.api.workflowservice.v1 import SetWorkerDeploymentCurrentVersionRequest
from temporalio.client import Client, WorkflowExecutionStatus

from switchback.worker import deployment_from_env
from tests.conftest import running_worker
from tests.scripts import full_job
from tests.test_durability import slow
from tests.waits import wait_for_requests


async def make_current(client: Client, name: str, build: str) -> None:
    """Make `build` the deployment's current version (once its worker has polled)."""
    for _ in range(100):
        try:
            await client.workflow_service.set_worker_deployment_current_version(
                SetWorkerDeploymentCurrentVersionRequest(
                    namespace=client.namespace, deployment_name=name, build_id=build))
            return
        except Exception:  # noqa: BLE001 - the version is not there until its worker polls
            await asyncio.sleep(0.2)
    raise AssertionError(f"version {name}.{build} never became current")


async def build_ids(client: Client, job_id: str) -> set[str]:
    """The build ids of the workers that completed the job's workflow tasks."""
    out = set()
    async for e in client.get_workflow_handle(job_id).fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            a = e.workflow_task_completed_event_attributes
            assert a.versioning_behavior == Behavior.VERSIONING_BEHAVIOR_PINNED
            out.add(a.deployment_version.build_id)
    return out


async def test_a_pinned_job_finishes_on_its_version_while_new_jobs_start_on_the_next(
        client, task_queue, start_job, model_server, s3, monkeypatch) -> None:
    name = f"switchback-{uuid.uuid4().hex[:8]}"

    def version(build: str) -> dict:
        monkeypatch.setenv("TEMPORAL_DEPLOYMENT_NAME", name)
        monkeypatch.setenv("TEMPORAL_WORKER_BUILD_ID", build)
        return deployment_from_env()

    async with running_worker(client, task_queue, **version("A")):
        await make_current(client, name, "A")
        old = await start_job(slow(full_job(2), 150), model_server, instructions="x",
                              documents=[], config="creator")
        await wait_for_requests(model_server, old.id, 4)
        async with running_worker(client, task_queue, **version("B")):
            await make_current(client, name, "B")
            assert (await old.describe()).status == WorkflowExecutionStatus.RUNNING
            steps_on_a_before = len(model_server.requests(old.id))
            new = await start_job(full_job(1), model_server, instructions="x", documents=[],
                                  config="creator")
            assert (await asyncio.wait_for(new.result(), 120)).status == "completed"
            assert (await asyncio.wait_for(old.result(), 120)).status == "completed"
    assert len(model_server.requests(old.id)) > steps_on_a_before  # it went on after B came
    assert await build_ids(client, old.id) == {"A"}  # every task, after B became current too
    assert await build_ids(client, new.id) == {"B"}


VARIABLES = ("TEMPORAL_DEPLOYMENT_NAME", "TEMPORAL_WORKER_BUILD_ID", "SWITCHBACK_DEPLOYMENT_NAME",
             "SWITCHBACK_BUILD_ID")


def version_of(options: dict) -> tuple[str, str] | None:
    config = options.get("deployment_config")
    return None if config is None else (config.version.deployment_name,
                                        config.version.build_id)


def test_the_old_names_are_still_read_and_temporals_win(monkeypatch, caplog) -> None:
    for variable in VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    assert deployment_from_env() == {}  # unversioned
    monkeypatch.setenv("SWITCHBACK_DEPLOYMENT_NAME", "switchback")
    monkeypatch.setenv("SWITCHBACK_BUILD_ID", "v1")
    assert version_of(deployment_from_env()) == ("switchback", "v1")
    monkeypatch.setenv("TEMPORAL_WORKER_BUILD_ID", "v2")  # the Worker Controller's
    assert version_of(deployment_from_env()) == ("switchback", "v2")
    assert "SWITCHBACK_BUILD_ID=v1 is not used: TEMPORAL_WORKER_BUILD_ID=v2 is set" in caplog.text
    monkeypatch.delenv("SWITCHBACK_BUILD_ID")
    monkeypatch.setenv("TEMPORAL_DEPLOYMENT_NAME", "fleet")
    options = deployment_from_env()
    assert version_of(options) == ("fleet", "v2")
    assert options["deployment_config"].use_worker_versioning
    monkeypatch.delenv("TEMPORAL_DEPLOYMENT_NAME")
    monkeypatch.delenv("SWITCHBACK_DEPLOYMENT_NAME")
    with pytest.raises(SystemExit, match="TEMPORAL_WORKER_BUILD_ID is set but a deployment "
                                         "name is not"):
        deployment_from_env()
