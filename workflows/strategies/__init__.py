"""The strategies a job config can name (`strategy:`), by name.

Adding one: a module here with a `Strategy` subclass (workflows/strategies/base.py),
and its line below.
"""

from __future__ import annotations

from switchback.workflows.strategies.auto import Auto
from switchback.workflows.strategies.base import Strategy
from switchback.workflows.strategies.nested import Nested
from switchback.workflows.strategies.phase_alternation import PhaseAlternation
from switchback.workflows.strategies.plan_revise_execute import PlanReviseExecute
from switchback.workflows.strategies.react import React

REGISTRY: dict[str, type[Strategy]] = {
    PhaseAlternation.name: PhaseAlternation,
    React.name: React,
    PlanReviseExecute.name: PlanReviseExecute,
    Nested.name: Nested,
    Auto.name: Auto,
}


def strategy_class(name: str) -> type[Strategy]:
    """The strategy registered under `name`; KeyError with the known names otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"strategy: unknown strategy '{name}' (known: "
                       f"{', '.join(sorted(REGISTRY))})") from None
