"""The breakers after a model step: their facts from the strategy's view, each trip
recorded (output/breakers/trip_<n>.json, a metric, a log line), the trips in the order
the orchestrator acts on them (stop, wrap_up, rewind, note).
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.breakers import Breakers, StepFacts, Trip, cost_of
    from switchback.workflows.contract import ModelReply, ResolvedConfig, layout
    from switchback.workflows.metrics import count_trip, log_extra
    from switchback.workflows.strategies.base import StrategyView
    from switchback.workflows.workspace_ops import WorkspaceOps

ORDER = ["stop", "wrap_up", "rewind", "note"]


async def observe(breakers: Breakers, view: StrategyView, reply: ModelReply,
                  cfg: ResolvedConfig, ops: WorkspaceOps) -> list[Trip]:
    ph, t = view.phase, view.totals
    assert ph is not None
    trips = breakers.observe(StepFacts(
        phase=ph.number, phase_steps=ph.steps, phase_variant=ph.variant,
        job_steps=t.steps, tool_digests=[c.digest for c in reply.tool_calls],
        tool_names=[c.name for c in reply.tool_calls], text=reply.content,
        progress=view.progress, tokens=t.tokens_in + t.tokens_out,
        cost=cost_of(cfg.config.llm, t.tokens_in, t.tokens_out), hint=view.stuck_hint))
    first = breakers.state.trip_count - len(trips) + 1
    for n, trip in enumerate(trips, first):
        count_trip(trip.breaker, trip.action)
        await ops.write_output(layout.trip_path(n), trip.model_dump())
    ordered = sorted(trips, key=lambda t: ORDER.index(t.action))
    for trip in ordered:
        workflow.logger.warning("breaker %s: %s", trip.breaker, trip.message,
                                extra=log_extra(ph))
    return ordered


def stop_status(trip: Trip) -> str:
    """The job's status when `trip` stops it."""
    return "budget_exhausted" if trip.breaker in ("budget", "job_steps") else "stuck"
