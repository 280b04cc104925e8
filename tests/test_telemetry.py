"""Observability: spans with job id / phase / tool, a Prometheus endpoint with switchback's
and the SDK's metrics, JSON log lines with the job's identity - each on a real job."""

from __future__ import annotations

import io
import json
import logging
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.worker import Worker

from switchback import telemetry
from switchback.devstack.processes import free_port
from switchback.telemetry.logs import configure_logging
from switchback.telemetry.tracing import (
    SwitchbackActivityInterceptor,
    tracer_provider_from_env,
    tracing_interceptors,
)
from switchback.telemetry.worker_metrics import runtime_from_env
from switchback.workflows import metrics as wf_metrics
from switchback.workflows.contract import JobInput, JobResult
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, full_job, step, tactical, transition

OTEL_VARS = ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SDK_DISABLED",
             "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "SWITCHBACK_PROMETHEUS_BIND",
             "SWITCHBACK_METRICS_PORT", "SWITCHBACK_LOG_FORMAT")


@dataclass
class ProbeRequest:
    conversation: str


@dataclass
class _Phase:
    number: int
    kind: str
    variant: str
    steps: int


@activity.defn(name="probe_log")
async def probe_log(req: ProbeRequest) -> str:
    activity.logger.info("probe activity ran")
    return "ok"


@workflow.defn(name="TelemetryProbe", sandboxed=False)
class TelemetryProbe:
    """Calls every workflow-side metric function and logs with the phase/step extras."""

    @workflow.run
    async def run(self) -> str:
        wf_metrics.phase_started(_Phase(3, "strategic", "rewind", 2))
        wf_metrics.count_trip("repetition", "nudge")
        wf_metrics.approvals_waiting(2)
        workflow.logger.info("probe at a step", extra=wf_metrics.log_extra(
            _Phase(3, "strategic", "rewind", 2)))
        return await workflow.execute_activity(
            probe_log, ProbeRequest("phase_0003"), start_to_close_timeout=timedelta(seconds=30))


async def _connect(client: Client, **options) -> Client:
    return await Client.connect(client.service_client.config.target_host,
                                namespace=client.namespace,
                                data_converter=client.data_converter, **options)


async def _run_job(tclient: Client, task_queue: str, model_server, script, **inp) -> tuple:
    job_id = f"job-{uuid.uuid4().hex[:10]}"
    model_server.set_script(job_id, script)
    handle = await tclient.start_workflow(
        "AgentJob", JobInput(instructions="x", documents=[], **inp), id=job_id,
        task_queue=task_queue, result_type=JobResult)
    return handle, await handle.result()


def test_off_by_default_and_on_from_the_otel_variables(monkeypatch):
    for var in OTEL_VARS:
        monkeypatch.delenv(var, raising=False)
    assert telemetry.interceptors_from_env() == []
    assert tracer_provider_from_env() is None and runtime_from_env() is None

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    provider = tracer_provider_from_env()
    exporters = [p.span_exporter for p in provider._active_span_processor._span_processors]
    assert [type(e) for e in exporters] == [ConsoleSpanExporter]
    assert provider.resource.attributes["service.name"] == "switchback"

    monkeypatch.delenv("OTEL_TRACES_EXPORTER")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "sb-test")
    provider = tracer_provider_from_env()
    exporters = [p.span_exporter for p in provider._active_span_processor._span_processors]
    assert [type(e) for e in exporters] == [OTLPSpanExporter]
    assert provider.resource.attributes["service.name"] == "sb-test"
    provider.shutdown()
    kinds = [type(i) for i in tracing_interceptors(TracerProvider())]
    assert kinds == [TracingInterceptor, SwitchbackActivityInterceptor]

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    monkeypatch.setenv("SWITCHBACK_LOG_FORMAT", "json")  # the activity interceptor alone
    assert [type(i) for i in telemetry.interceptors_from_env()] == [
        SwitchbackActivityInterceptor]


async def test_spans_carry_job_phase_and_tool(client, task_queue, model_server, s3):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tclient = await _connect(client, interceptors=tracing_interceptors(provider))
    async with running_worker(tclient, task_queue):
        handle, result = await _run_job(tclient, task_queue, model_server, full_job(1),
                                        config="creator")
    assert result.status == "completed"
    spans = exporter.get_finished_spans()
    by_name: dict[str, list] = {}
    for sp in spans:
        by_name.setdefault(sp.name, []).append(sp)
    assert "StartWorkflow:AgentJob" in by_name and "RunWorkflow:AgentJob" in by_name
    assert len({sp.context.trace_id for sp in spans}) == 1  # one trace for the whole job

    models = by_name["RunActivity:call_model"]
    assert len(models) == result.steps
    assert {sp.attributes["switchback.job_id"] for sp in models} == {handle.id}
    assert {sp.attributes["switchback.phase"] for sp in models} == {1, 2, 3}
    assert sum(sp.attributes["switchback.tokens_in"] for sp in models) == result.tokens_in
    assert all(sp.attributes["temporalWorkflowID"] == handle.id for sp in models)

    # local tool calls run under their own activity type, `tool.<name>`
    tools = [sp for name, sps in by_name.items() for sp in sps
             if name == "RunActivity:run_tool" or name.startswith("RunActivity:tool.")]
    assert {sp.attributes["switchback.tool"] for sp in tools} >= {"list_files", "read_file",
                                                                  "write_file"}
    assert all(sp.attributes["switchback.job_id"] == handle.id for sp in tools)
    assert all(sp.attributes["switchback.outcome"] == "ok" for sp in tools)
    writes = [sp for sp in tools if sp.attributes["switchback.tool"] == "write_file"]
    assert {sp.attributes["switchback.phase"] for sp in writes} == {1, 2, 3}
    archive = by_name["RunActivity:archive_phase"]
    assert [sp.attributes["switchback.phase"] for sp in archive] == [2]
    provider.shutdown()


def _samples(text: str, name: str) -> list[tuple[dict, float]]:
    out = []
    for m in re.finditer(rf"^{name}\{{(.*?)\}} (\S+)$", text, re.M):
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        out.append((labels, float(m.group(2))))
    return out


def _counts(text: str, name: str, queue: str, *labels: str) -> dict:
    """A metric's values on the job's task queue, by the given labels."""
    out: dict = {}
    for lb, v in _samples(text, name):
        if lb["task_queue"] == queue:
            key = tuple(lb[k] for k in labels) if len(labels) != 1 else lb[labels[0]]
            out[key] = out.get(key, 0) + v
    return out


def known_script() -> list[dict]:
    """A job whose every count is known: a tool error, a model call retried after a 500, a
    todo_rewind, a repetition nudge; 100 prompt and 10 completion tokens per answer."""
    usage = {"usage": {"prompt_tokens": 100, "completion_tokens": 10}}
    same = step(call("read_file", path="instructions.md"))
    script = (bootstrap() + tactical(1)
              + [step(call("todo_rewind", issue="the plan does not hold"))]
              + transition("Again") + [same] * 5 + tactical(5, "r") + finish())
    script.insert(1, step(call("read_file", path="missing.md")))  # file_not_found
    script = [{**s, **usage} for s in script]
    script.insert(2, {"error": {"status": 500, "message": "boom"}})  # retried: no tokens
    return script


async def test_a_prometheus_scrape_after_a_known_job(client, task_queue, model_server, s3,
                                                     monkeypatch):
    port = free_port()
    monkeypatch.setenv("SWITCHBACK_METRICS_PORT", str(port))
    for var in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
                "SWITCHBACK_PROMETHEUS_BIND"):
        monkeypatch.delenv(var, raising=False)
    tclient = await _connect(client, runtime=runtime_from_env(),
                             interceptors=telemetry.interceptors_from_env())
    script = known_script()
    async with running_worker(tclient, task_queue):
        _, result = await _run_job(tclient, task_queue, model_server, script, config={
            "extends": "creator", "breakers": {"no_progress_steps": 0}})
    probe_queue = f"{task_queue}-probe"
    async with Worker(tclient, task_queue=probe_queue, workflows=[TelemetryProbe],
                      activities=[probe_log]):
        await tclient.execute_workflow(TelemetryProbe.run, id=f"probe-{uuid.uuid4().hex[:8]}",
                                       task_queue=probe_queue)
    async with httpx.AsyncClient() as http:  # what a Prometheus scrape gets
        text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text

    answers = len(script) - 1
    assert result.status == "completed" and result.steps == answers == 27
    assert _counts(text, "switchback_model_calls", task_queue, "outcome") == {
        "ok": answers, "ModelUnavailable": 1}
    assert _counts(text, "switchback_tokens_in", task_queue) == {(): 100 * answers}
    assert _counts(text, "switchback_tokens_out", task_queue) == {(): 10 * answers}
    assert _counts(text, "switchback_tool_calls", task_queue, "tool", "outcome") == {
        ("list_files", "ok"): 2, ("read_file", "ok"): 6, ("read_file", "file_not_found"): 1,
        ("write_file", "ok"): 12, ("todo_write", "ok"): 2}
    assert _counts(text, "switchback_phases", task_queue, "kind", "variant") == {
        ("strategic", "bootstrap"): 1, ("tactical", "work"): 2, ("strategic", "rewind"): 1,
        ("strategic", "transition"): 1}
    assert _counts(text, "switchback_rewinds", task_queue) == {(): 1}
    assert _counts(text, "switchback_breaker_trips", task_queue, "breaker", "action") == {
        ("repetition", "note"): 1}
    # the probe workflow: the approvals gauge and the labels of each workflow-side metric
    assert _counts(text, "switchback_breaker_trips", probe_queue, "breaker", "action") == {
        ("repetition", "nudge"): 1}
    waiting = _samples(text, "switchback_approvals_waiting")
    assert [v for lb, v in waiting if lb["job_id"].startswith("probe-")] == [2.0]
    # the SDK's own metrics on the same endpoint
    assert re.search(r"^temporal_workflow_completed\{", text, re.M)
    assert re.search(r"^temporal_activity_execution_latency_bucket\{", text, re.M)


async def test_json_log_lines_carry_the_job(client, task_queue, model_server, s3,
                                            monkeypatch):
    monkeypatch.setenv("SWITCHBACK_LOG_FORMAT", "json")
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = configure_logging(level="INFO", stream=stream)
    try:
        tclient = await _connect(client, interceptors=telemetry.interceptors_from_env())
        config = {"extends": "creator", "continue_as_new": {"every_phases": 1}}
        async with running_worker(tclient, task_queue):
            handle, result = await _run_job(tclient, task_queue, model_server, full_job(1),
                                            config=config)
        async with Worker(tclient, task_queue=f"{task_queue}-probe",
                          workflows=[TelemetryProbe], activities=[probe_log]):
            probe = await tclient.start_workflow(TelemetryProbe.run, id=f"probe-{task_queue}",
                                                 task_queue=f"{task_queue}-probe")
            await probe.result()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert result.status == "completed"
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert all({"ts", "level", "logger", "message"} <= set(rec) for rec in lines)
    continued = [r for r in lines if r["message"].startswith("continuing as new")]
    assert continued and all(r["job_id"] == handle.id and r["run_id"] for r in continued)
    assert all(r["workflow_type"] == "AgentJob" and "({" not in r["message"]
               for r in continued)
    step = next(r for r in lines if r["message"] == "probe at a step")
    assert (step["job_id"], step["phase"], step["step"]) == (probe.id, 3, 2)
    act = next(r for r in lines if r["message"] == "probe activity ran")
    assert (act["job_id"], act["phase"], act["activity"]) == (probe.id, 3, "probe_log")
    assert act["run_id"] == step["run_id"] and act["attempt"] == 1
