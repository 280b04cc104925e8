"""OpenTelemetry tracing: the SDK's TracingInterceptor, plus switchback's span attributes.

Off by default. On when the standard OpenTelemetry variables ask for it:

  OTEL_TRACES_EXPORTER            otlp | console | none (comma-separated; unset: otlp if an
                                  OTLP endpoint is set, else off)
  OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT   where OTLP goes
  OTEL_EXPORTER_OTLP_PROTOCOL / _TRACES_PROTOCOL   http/protobuf (default) | grpc (needs
                                  opentelemetry-exporter-otlp-proto-grpc installed)
  OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES       the resource (default service name
                                  `switchback`); OTEL_SDK_DISABLED=true turns it all off
  (headers, timeouts, certificates: the exporter reads its own OTEL_EXPORTER_OTLP_* vars)

`interceptors_from_env()` returns the interceptors for `Client.connect(interceptors=...)`
(workers built from that client use them too), or [] when tracing is off:
`TracingInterceptor` (client spans, workflow spans even for jobs started from the CLI,
activity spans linked to them) and, inside it, `SwitchbackActivityInterceptor`.

`SwitchbackActivityInterceptor`, for every activity of a switchback job:
- sets on the current span `switchback.job_id`, `switchback.phase` (from the request's
  conversation key `phase_NNNN`), `switchback.tool` (run_tool: ToolRequest.name), and
  after the call `switchback.outcome`, `switchback.tokens_in` / `_out` (model calls);
- records the activity-side metrics (telemetry/worker_metrics.py): model calls and tokens for
  call_model / summarize_conversation, tool calls by tool and outcome for run_tool;
- keeps job id, phase and tool in `telemetry.logs.ACTIVITY_CONTEXT` for JSON log lines.
It is also useful without tracing (then the spans are non-recording): the package's
`telemetry.interceptors_from_env()` includes it whenever metrics or JSON logs are on.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

import opentelemetry.trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)
from temporalio import activity, client, worker
from temporalio.common import RawValue
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.exceptions import ApplicationError

from switchback.telemetry.logs import ACTIVITY_CONTEXT
from switchback.telemetry.worker_metrics import record_model_call, record_tool_call
from switchback.workflows.contract.names import TOOL_ACTIVITY_PREFIX

ENV_VARS = ["OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SDK_DISABLED"]
MODEL_ACTIVITIES = ("call_model", "summarize_conversation")
TOOL_ACTIVITY = "run_tool"
TOOL_TYPE_PREFIX = TOOL_ACTIVITY_PREFIX  # a tool run as a local activity: `tool.<name>`
PHASE_KEY = re.compile(r"phase_(\d+)")


def is_tool(kind: str) -> bool:
    return kind == TOOL_ACTIVITY or kind.startswith(TOOL_TYPE_PREFIX)


_installed: TracerProvider | None = None  # the provider this process made global


def exporters_from_env() -> list[str]:
    """The span exporters the environment asks for ([] = tracing off)."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [n.strip().lower() for n in os.environ.get("OTEL_TRACES_EXPORTER", "").split(",")
             if n.strip()]
    if not names:
        endpoint = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                    or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
        return ["otlp"] if endpoint else []
    unknown = [n for n in names if n not in ("otlp", "console", "none")]
    if unknown:
        raise ValueError(f"OTEL_TRACES_EXPORTER={','.join(names)}: switchback knows otlp, "
                         "console and none")
    return [n for n in names if n != "none"]


def _otlp_exporter():
    protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").lower()
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError as e:
            raise RuntimeError("OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the package "
                               "opentelemetry-exporter-otlp-proto-grpc") from e
        return OTLPSpanExporter()
    if protocol not in ("http/protobuf", "http"):
        raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: use http/protobuf or grpc")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    return OTLPSpanExporter()


def tracer_provider_from_env() -> TracerProvider | None:
    """A TracerProvider with the exporters the environment names, or None when off."""
    names = exporters_from_env()
    if not names:
        return None
    attrs = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: "switchback"}
    provider = TracerProvider(resource=Resource.create(attrs))
    for name in names:
        if name == "console":
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
        else:
            provider.add_span_processor(BatchSpanProcessor(_otlp_exporter()))
    return provider


def tracing_interceptors(provider: opentelemetry.trace.TracerProvider) -> list:
    """The interceptors for `Client.connect(interceptors=...)`, tracing to `provider`."""
    tracer = provider.get_tracer("switchback")
    return [TracingInterceptor(tracer, always_create_workflow_spans=True),
            SwitchbackActivityInterceptor()]


def interceptors_from_env() -> list:
    """Tracing interceptors when the OTEL_* environment asks for tracing, else []."""
    global _installed
    provider = tracer_provider_from_env()
    if provider is None:
        return []
    if _installed is None:  # the global provider can be set once per process
        opentelemetry.trace.set_tracer_provider(provider)
        _installed = provider
    return tracing_interceptors(provider)


def shutdown() -> None:
    """Flush and stop the exporters of the provider interceptors_from_env installed."""
    if _installed is not None:
        _installed.shutdown()


def phase_of(conversation: str | None) -> int | None:
    m = PHASE_KEY.search(conversation or "")
    return int(m.group(1)) if m else None


def request_facts(activity_type: str, req: Any, workflow_id: str | None) -> dict[str, Any]:
    """job_id / phase / tool of an activity request, where it has them."""
    if isinstance(req, list | tuple) and req and isinstance(req[0], RawValue):
        req = req[0]  # a dynamic activity's arguments (`tool.<name>`), still payloads
    if isinstance(req, RawValue):
        try:
            req = activity.payload_converter().from_payload(req.payload, dict)
        except Exception:  # noqa: BLE001 - facts are best effort
            req = {}

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    facts: dict[str, Any] = {}
    job_id = get(get(req, "workspace"), "job_id") or workflow_id
    if job_id:
        facts["job_id"] = job_id
    phase = phase_of(get(req, "conversation"))
    if phase is None and isinstance(get(req, "phase"), int):
        phase = get(req, "phase")  # archive_phase, snapshot_phase
    if phase is not None:
        facts["phase"] = phase
    if is_tool(activity_type) and get(req, "name"):
        facts["tool"] = get(req, "name")
    return facts


def _error_outcome(e: BaseException) -> str:
    if isinstance(e, asyncio.CancelledError):
        return "cancelled"
    if isinstance(e, ApplicationError) and e.type:
        return e.type
    return type(e).__name__


class SwitchbackActivityInterceptor(client.Interceptor, worker.Interceptor):
    """Job id / phase / tool on activity spans, activity metrics, log context (see above)."""

    def intercept_activity(self, next: worker.ActivityInboundInterceptor
                           ) -> worker.ActivityInboundInterceptor:
        return _ActivityInbound(next)


class _ActivityInbound(worker.ActivityInboundInterceptor):
    async def execute_activity(self, input: worker.ExecuteActivityInput) -> Any:
        info = activity.info()
        kind = info.activity_type
        facts = request_facts(kind, input.args[0] if input.args else None, info.workflow_id)
        span = opentelemetry.trace.get_current_span()
        for key, value in facts.items():
            span.set_attribute(f"switchback.{key}", value)
        token = ACTIVITY_CONTEXT.set(facts)
        try:
            result = await self.next.execute_activity(input)
        except BaseException as e:
            outcome = _error_outcome(e)
            span.set_attribute("switchback.outcome", outcome)
            if kind in MODEL_ACTIVITIES:
                record_model_call(None, outcome)
            elif is_tool(kind):
                record_tool_call(facts.get("tool", "?"), outcome)
            raise
        finally:
            ACTIVITY_CONTEXT.reset(token)
        _observe(span, kind, facts, result)
        return result


def _observe(span: Any, kind: str, facts: dict, result: Any) -> None:
    if kind in MODEL_ACTIVITIES:
        if getattr(result, "needs_compaction", False):
            span.set_attribute("switchback.outcome", "needs_compaction")
            return  # no request was sent
        usage = getattr(result, "usage", None)
        span.set_attribute("switchback.outcome", "ok")
        span.set_attribute("switchback.tokens_in", getattr(usage, "prompt_tokens", 0) or 0)
        span.set_attribute("switchback.tokens_out", getattr(usage, "completion_tokens", 0) or 0)
        if kind == "summarize_conversation" and usage is not None and not (
                usage.prompt_tokens or usage.completion_tokens):
            return  # nothing to fold: no request was sent
        record_model_call(usage, "ok")
    elif is_tool(kind):
        ok = getattr(result, "ok", True)
        outcome = "ok" if ok else (getattr(result, "code", "") or "error")
        span.set_attribute("switchback.outcome", outcome)
        record_tool_call(facts.get("tool", "?"), outcome)
