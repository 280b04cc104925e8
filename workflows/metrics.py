"""Workflow-side metrics of AgentJob, through `workflow.metric_meter()`, and its log context.

The SDK's workflow meter is replay-safe: nothing is recorded while a workflow task
replays history, so a worker restart or a cache eviction never counts a phase twice.
Recording issues no command, so calling these needs no `workflow.patched`. Each is a
no-op outside a workflow or when the worker's runtime exports no metrics (see
telemetry/worker_metrics.py), and never raises. The meter adds `namespace`, `task_queue`
and `workflow_type`.

  switchback_phases{kind, variant}     a phase started (counted once, in the run that runs it)
  switchback_rewinds                   a rewind phase started (todo_rewind, the signal, breakers)
  switchback_breaker_trips{breaker, action}
  switchback_approvals_waiting{job_id} gauge: tool calls of that job waiting for `approve`
                                       (an absolute value per job, not a delta: the SDK's meter
                                       has no up/down counter, and a per-job value stays right
                                       when the job moves to another worker)

`phase_started(phase)` counts a phase (and a rewind, for a rewind phase) in one call;
`log_extra(phase)` is the `extra=` for `workflow.logger` calls, so JSON log lines
(telemetry/logs.py) carry the phase number and its model steps so far.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow


def count_phase(kind: str, variant: str = "") -> None:
    try:
        workflow.metric_meter().create_counter("switchback_phases", "phases started").add(
            1, {"kind": kind or "?", "variant": variant or "?"})
    except Exception:  # noqa: BLE001 - metrics must never fail a workflow task
        pass


def count_rewind() -> None:
    try:
        workflow.metric_meter().create_counter("switchback_rewinds",
                                               "rewind phases started").add(1)
    except Exception:  # noqa: BLE001
        pass


def count_trip(breaker: str, action: str = "") -> None:
    try:
        workflow.metric_meter().create_counter(
            "switchback_breaker_trips", "circuit breaker trips").add(
            1, {"breaker": breaker or "?", "action": action or "?"})
    except Exception:  # noqa: BLE001
        pass


def approvals_waiting(count: int) -> None:
    """Set how many tool calls of this job wait for approval now (0 when none)."""
    try:
        workflow.metric_meter().create_gauge(
            "switchback_approvals_waiting", "tool calls waiting for approval").set(
            max(0, int(count)), {"job_id": workflow.info().workflow_id})
    except Exception:  # noqa: BLE001
        pass


def phase_started(phase: Any) -> None:
    """A phase (kind, variant: workflows/strategies/base.PhaseInfo) starts in this run."""
    if phase is None:
        return
    count_phase(phase.kind, phase.variant)
    if phase.variant == "rewind":
        count_rewind()


def log_extra(phase: Any) -> dict[str, Any]:
    """`extra=` for workflow.logger: the phase number and its steps so far ({} if none)."""
    return {"phase": phase.number, "step": phase.steps} if phase is not None else {}
