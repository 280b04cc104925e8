"""Metrics: the Temporal SDK's own, and switchback's, on one Prometheus endpoint.

`runtime_from_env()` builds a `temporalio.runtime.Runtime` whose telemetry exports
metrics on a Prometheus `/metrics` endpoint when one of these is set (else None: the
default runtime, no metrics):

  SWITCHBACK_PROMETHEUS_BIND  host:port to bind, e.g. 127.0.0.1:9464
  SWITCHBACK_METRICS_PORT     a port; binds 0.0.0.0:<port> (what a scraper in a pod needs)

Pass it to `Client.connect(runtime=...)` in the worker. The SDK then exports its own
metrics (`temporal_*`: task latencies, slots, polls, activity/workflow outcomes) and
every metric recorded through `activity.metric_meter()` / `workflow.metric_meter()` on
that endpoint. switchback's activity-side counters (recorded by
`telemetry.tracing.SwitchbackActivityInterceptor` through the functions below; the
meter adds `namespace`, `task_queue`, `activity_type`):

  switchback_model_calls{outcome}        one per model request (call_model, summarize);
                                         outcome `ok` or the error type (ModelRateLimited,
                                         ModelUnavailable, ..., cancelled)
  switchback_tokens_in / _tokens_out     prompt / completion tokens as the endpoint reported
  switchback_tool_calls{tool, outcome}   one per run_tool; outcome `ok` or the error code the
                                         model sees (invalid_arguments, not_found, ...) or the
                                         exception type when the activity raised (retried)

The workflow-side counters are in workflows/metrics.py. Every function here is a
no-op outside an activity or when metrics are off, and never raises.
"""

from __future__ import annotations

import os
from typing import Any

from temporalio import activity
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

ENV_VARS = ["SWITCHBACK_PROMETHEUS_BIND", "SWITCHBACK_METRICS_PORT"]


def bind_address_from_env() -> str | None:
    bind = (os.environ.get("SWITCHBACK_PROMETHEUS_BIND") or "").strip()
    if bind:
        return bind
    port = (os.environ.get("SWITCHBACK_METRICS_PORT") or "").strip()
    if not port:
        return None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"SWITCHBACK_METRICS_PORT={port!r}: use a port number")
    return f"0.0.0.0:{int(port)}"


def runtime_from_env() -> Runtime | None:
    """A Runtime exporting Prometheus metrics when the environment asks for it, else None."""
    bind = bind_address_from_env()
    if bind is None:
        return None
    try:
        return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=bind)))
    except Exception as e:
        raise RuntimeError(f"cannot serve Prometheus metrics on {bind} "
                           f"(SWITCHBACK_PROMETHEUS_BIND / SWITCHBACK_METRICS_PORT): {e}") from e


def _tokens(usage: Any) -> tuple[int, int]:
    if usage is None:
        return 0, 0
    if isinstance(usage, dict):
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return (int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0))


def record_model_call(usage: Any = None, outcome: str = "ok") -> None:
    """Count one model request and the tokens it used (`usage`: Usage, dict or None)."""
    try:
        meter = activity.metric_meter()
        meter.create_counter("switchback_model_calls", "model requests by outcome").add(
            1, {"outcome": outcome or "error"})
        tokens_in, tokens_out = _tokens(usage)
        if tokens_in > 0:
            meter.create_counter("switchback_tokens_in", "prompt tokens", "tokens").add(
                tokens_in)
        if tokens_out > 0:
            meter.create_counter("switchback_tokens_out", "completion tokens", "tokens").add(
                tokens_out)
    except Exception:  # noqa: BLE001 - metrics must never break an activity
        pass


def record_tool_call(name: str, outcome: str = "ok") -> None:
    """Count one tool call by tool name and outcome (`ok` or an error code)."""
    try:
        activity.metric_meter().create_counter(
            "switchback_tool_calls", "tool calls by tool and outcome").add(
            1, {"tool": name or "?", "outcome": outcome or "error"})
    except Exception:  # noqa: BLE001 - metrics must never break an activity
        pass
