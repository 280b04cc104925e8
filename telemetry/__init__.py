"""Observability of switchback processes: traces, metrics, logs. All off by default.

    tracing.py   OpenTelemetry traces (OTEL_* variables): interceptors for Client.connect
    metrics.py   Prometheus endpoint (SWITCHBACK_METRICS_PORT / SWITCHBACK_PROMETHEUS_BIND):
                 a Runtime for Client.connect; switchback's activity-side counters
                 (workflow-side ones: workflows/metrics.py)
    logs.py      SWITCHBACK_LOG_FORMAT=json|text, SWITCHBACK_LOG_LEVEL

`interceptors_from_env()` here is what a worker passes to `Client.connect`: the tracing
interceptors when tracing is on; otherwise `SwitchbackActivityInterceptor` alone when
metrics or JSON logs are on (it records the activity metrics and the log context);
otherwise nothing.
"""

from __future__ import annotations

import os

from switchback.telemetry import tracing
from switchback.telemetry.logs import configure_logging
from switchback.telemetry.worker_metrics import bind_address_from_env, runtime_from_env

ENV_VARS = [*tracing.ENV_VARS, "SWITCHBACK_PROMETHEUS_BIND", "SWITCHBACK_METRICS_PORT",
            "SWITCHBACK_LOG_FORMAT", "SWITCHBACK_LOG_LEVEL"]


def interceptors_from_env() -> list:
    found = tracing.interceptors_from_env()
    if found:
        return found
    json_logs = os.environ.get("SWITCHBACK_LOG_FORMAT", "").strip().lower() == "json"
    if json_logs or bind_address_from_env():
        return [tracing.SwitchbackActivityInterceptor()]
    return []


def shutdown() -> None:
    """Flush what is buffered (spans) before the process exits."""
    tracing.shutdown()


__all__ = ["ENV_VARS", "configure_logging", "interceptors_from_env", "runtime_from_env",
           "shutdown"]
