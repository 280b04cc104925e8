"""SwitchbackPlugin on a client of the user's own (tests/plugin_app.py): the user's codec and
failure converter are kept - their own workflows' payloads and failures are still theirs in
history, and so are the AgentJob's their workflow starts as a child; switchback's metrics
come out of the embedded worker, its interceptors leave the user's activities alone; the
child's history replays through the plugin; a workflow module that imports switchback.plugin
passes the sandbox's validation."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowFailureError
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner
from temporalio.workflow import _Definition

from switchback.codec import AesGcmCodec
from switchback.codec.bounded_failures import BoundedFailureConverter
from switchback.devstack.processes import free_port
from switchback.plugin import (
    PASSTHROUGH,
    SwitchbackClientPlugin,
    SwitchbackPlugin,
    SwitchbackWorkerPlugin,
    workflow_runner,
)
from tests import plugin_app
from tests.plugin_app import SEALED, SOURCE, SealCodec, TaggingFailureConverter
from tests.scripts import call, step


def user_converter() -> DataConverter:
    return DataConverter(payload_codec=SealCodec(),
                         failure_converter_class=TaggingFailureConverter)


def encodings(history, kind: str, field: str) -> list[bytes]:
    """The `encoding` of each payload of `field` in every event of `kind`."""
    out = []
    for event in history.events:
        if event.HasField(kind):
            payloads = getattr(getattr(event, kind), field).payloads
            out += [p.metadata.get("encoding", b"") for p in payloads]
    return out


async def test_the_plugin_keeps_the_users_codec_and_failure_converter(
        client: Client, s3, model_server) -> None:
    port = free_port()
    runtime = Runtime(telemetry=TelemetryConfig(
        metrics=PrometheusConfig(bind_address=f"127.0.0.1:{port}")))
    user = user_converter()
    app = await Client.connect(client.service_client.config.target_host,
                               namespace=client.namespace, data_converter=user,
                               runtime=runtime, plugins=[SwitchbackPlugin(s3)])
    converter = app.data_converter
    assert converter.payload_codec is user.payload_codec
    assert converter.failure_converter_class is TaggingFailureConverter
    assert converter.payload_converter_class is PydanticPayloadConverter
    assert converter.external_storage is not None  # large payloads to S3: it had none

    queue, run = f"app-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    model_server.set_script(f"delegate-{run}-job", [
        step(call("write_file", path="hello.md", content="# Hello\n")),
        step(call("job_complete", summary="wrote hello.md", deliverables=["hello.md"],
                  confidence=0.9, notes=""))])
    async with Worker(app, task_queue=queue, workflows=plugin_app.WORKFLOWS,
                      activities=plugin_app.ACTIVITIES):
        shouted = await app.execute_workflow(plugin_app.Shout.run, "hi", id=f"shout-{run}",
                                             task_queue=queue)
        context = await app.execute_workflow(plugin_app.Probe.run, id=f"probe-{run}",
                                             task_queue=queue)
        with pytest.raises(WorkflowFailureError) as refused:
            await app.execute_workflow(plugin_app.Refuse.run, "no", id=f"refuse-{run}",
                                       task_queue=queue)
        status = await asyncio.wait_for(app.execute_workflow(
            plugin_app.Delegate.run, "write hello.md", id=f"delegate-{run}",
            task_queue=queue), 120)
        async with httpx.AsyncClient() as http:
            metrics = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    assert shouted == "HI" and status == "completed"
    assert await s3.get("switchback", f"delegate-{run}-job/hello.md") == b"# Hello\n"

    # the user's own workflow: every payload in history went through the user's codec
    shout = await app.get_workflow_handle(f"shout-{run}").fetch_history()
    for kind, field in (("workflow_execution_started_event_attributes", "input"),
                        ("activity_task_scheduled_event_attributes", "input"),
                        ("activity_task_completed_event_attributes", "result"),
                        ("workflow_execution_completed_event_attributes", "result")):
        assert encodings(shout, kind, field) == [SEALED], (kind, encodings(shout, kind, field))
    # its failure was made by the user's failure converter
    cause = refused.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "Refused"
    failed = (await app.get_workflow_handle(f"refuse-{run}").fetch_history()).events[-1]
    assert failed.workflow_execution_failed_event_attributes.failure.source == SOURCE
    # the AgentJob its workflow started: the user's codec on the job's payloads too
    job = await app.get_workflow_handle(f"delegate-{run}-job").fetch_history()
    found = (encodings(job, "workflow_execution_started_event_attributes", "input")
             + encodings(job, "activity_task_scheduled_event_attributes", "input")
             + encodings(job, "activity_task_completed_event_attributes", "result"))
    assert len(found) > 4 and set(found) == {SEALED}, found
    raw = Payload()
    raw.ParseFromString(job.events[0].workflow_execution_started_event_attributes
                        .input.payloads[0].data[::-1])
    assert raw.metadata["encoding"] == b"json/plain"  # sealed over pydantic's JSON
    # its local activities' results too; the job knows its payloads are encrypted (and so
    # keeps free text out of its search attributes, which the server stores in plain text)
    results = {}
    for e in job.events:
        if e.HasField("marker_recorded_event_attributes"):
            details = e.marker_recorded_event_attributes.details
            kind = json.loads(details["data"].payloads[0].data)["activity_type"]
            (results[kind],) = details["result"].payloads
    assert {"load_config", "create_workspace"} <= set(results)
    assert {p.metadata["encoding"] for p in results.values()} == {SEALED}
    (config,) = await SealCodec().decode([results["load_config"]])
    assert json.loads(config.data)["payloads_encrypted"] is True

    # switchback's metrics from the embedded worker; its interceptors skip the user's activity
    assert f'task_queue="{queue}"' in metrics
    assert any(line.startswith("switchback_model_calls") and f'task_queue="{queue}"' in line
               for line in metrics.splitlines()), metrics[:2000]
    assert context == {"log_context": None, "deadline": None}

    # the child's history replays through the plugin, with the user's converter
    replayer = Replayer(workflows=[], data_converter=user_converter(),
                        plugins=[SwitchbackPlugin(s3)])
    result = await replayer.replay_workflow(job, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


def test_switchbacks_own_converter_when_the_client_has_none(s3, monkeypatch) -> None:
    """No converter of the user's: switchback's as its own worker has it - bounded failures,
    and SWITCHBACK_CODEC_KEYS' codec with failure text encoded when that is set."""
    monkeypatch.delenv("SWITCHBACK_CODEC_KEYS", raising=False)
    plain = SwitchbackClientPlugin(s3).converter(None)
    assert plain.payload_codec is None and plain.failure_converter_class is BoundedFailureConverter
    monkeypatch.setenv("SWITCHBACK_CODEC_KEYS", "k1:" + "A" * 43 + "=")
    sealed = SwitchbackClientPlugin(s3).converter(DataConverter.default)
    assert isinstance(sealed.payload_codec, AesGcmCodec)
    assert sealed.failure_converter_class.__name__ == "BoundedFailureConverterWithEncodedAttributes"
    mine = user_converter()  # the user's codec wins over the variable
    assert SwitchbackClientPlugin(s3).converter(mine).payload_codec is mine.payload_codec


def test_a_converter_of_the_users_own_is_replaced_with_a_warning(s3) -> None:
    class Mine(PydanticPayloadConverter):
        pass
    kept = DataConverter(payload_converter_class=Mine)
    assert SwitchbackClientPlugin(s3).converter(kept).payload_converter_class is Mine
    from temporalio.converter import DefaultPayloadConverter

    class Other(DefaultPayloadConverter):
        pass
    with pytest.warns(UserWarning, match="Other is replaced with PydanticPayloadConverter"):
        changed = SwitchbackClientPlugin(s3).converter(DataConverter(payload_converter_class=Other))
    assert changed.payload_converter_class is PydanticPayloadConverter


async def test_a_workflow_module_importing_the_plugin_passes_the_sandbox() -> None:
    """The SDK's own sandbox, with no passthrough of switchback's, validates the module;
    so does the plugin's runner, which passes switchback's modules through."""
    for runner in (SandboxedWorkflowRunner(), workflow_runner(None)):
        for wf in plugin_app.WORKFLOWS:
            runner.prepare_workflow(_Definition.must_from_class(wf))
    runner = workflow_runner(None)
    assert isinstance(runner, SandboxedWorkflowRunner)
    assert set(PASSTHROUGH) <= runner.restrictions.passthrough_modules
    parts = "switchback.workflows.agent_job".split(".")  # workflow code: loaded afresh
    assert not {".".join(parts[:n]) for n in range(1, 4)} & runner.restrictions.passthrough_modules
    unsandboxed = UnsandboxedWorkflowRunner()
    assert workflow_runner(unsandboxed) is unsandboxed  # the user's choice stands


async def test_the_worker_plugin_alone_needs_the_client_half(client: Client, s3) -> None:
    plain = await Client.connect(client.service_client.config.target_host,
                                 namespace=client.namespace)
    with pytest.raises(ValueError, match="SwitchbackClientPlugin"):
        Worker(plain, task_queue="never-polled", workflows=[plugin_app.Shout],
               activities=[plugin_app.shout], plugins=[SwitchbackWorkerPlugin(s3)])
    split = await Client.connect(client.service_client.config.target_host,
                                 namespace=client.namespace,
                                 plugins=[SwitchbackClientPlugin(s3)])
    worker = Worker(split, task_queue="never-polled", workflows=[plugin_app.Shout],
                    activities=[plugin_app.shout], plugins=[SwitchbackWorkerPlugin(s3)])
    assert "AgentJob" in [w.__name__ for w in worker.config(active_config=True)["workflows"]]
