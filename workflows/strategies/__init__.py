"""The strategies a job config can name (`strategy:`), by name.

Adding one: a module here with a `Strategy` subclass (workflows/strategies/base.py),
and its line below.
"""

from __future__ import annotations

from workflows.strategies.base import Strategy
from workflows.strategies.phase_alternation import PhaseAlternation
from workflows.strategies.react import React

REGISTRY: dict[str, type[Strategy]] = {
    PhaseAlternation.name: PhaseAlternation,
    React.name: React,
}


def strategy_class(name: str) -> type[Strategy]:
    """The strategy registered under `name`; KeyError with the known names otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"strategy: unknown strategy '{name}' (known: "
                       f"{', '.join(sorted(REGISTRY))})") from None
