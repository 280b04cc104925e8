"""What each contender's model is shown, side by side: one table the runner writes into the
report above the figures.

The contenders are not made equal, on purpose: the plain loop is BFCL's own protocol (no
system prompt, BFCL's functions only, the turn ends with an answer), so its figure stays
comparable with BFCL's published ones; a job is switchback as a user runs it (its system
prompt with the task, the strategy's control tools, the model profile its endpoint brings).
What the comparison holds equal is the budget (budget.py: model calls per turn); what
differs is shown here, from the jobs' resolved config.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from switchback.workflows.contract.config_names import STRATEGIC_TOOLS, TACTICAL_TOOLS

BASELINE = "baseline"
# the tools a strategy adds to the task's and the file tools, by what its prompts offer
# (tests/test_bfcl_runner.py checks them against the tools the jobs' requests carried)
CONTROL_TOOLS: dict[str, list[str]] = {
    "react": ["job_complete"],
    "phase_alternation": list(dict.fromkeys(STRATEGIC_TOOLS + TACTICAL_TOOLS)),
    "plan_revise_execute": ["submit_plan", "submit_evaluation", "step_result"],
}
PROMPTS = {  # the system prompt, in a few words
    BASELINE: "none (BFCL sends none to a function-calling model)",
    "react": "switchback's react prompt with the task (instructions.md)",
    "phase_alternation": "switchback's strategic / tactical prompts with the task and todos",
    "plan_revise_execute": "switchback's plan / evaluate / step prompts with the task",
}


def rows(job_config: Any, contenders: Sequence[str], case: dict[str, Any],
         calls_per_turn: int) -> list[dict[str, Any]]:
    """One row per contender: system prompt, model profile, how many of the case's BFCL
    functions, the control tools, the file tools and in which phases, the call budget.
    `job_config(case, strategy)` is the runner's inline config of a job."""
    from switchback.activities.config_files import ConfigError, load_config
    from switchback_bfcl import cases

    functions = len(cases.tool_names(case, 0))
    out = []
    for c in contenders:
        if c == BASELINE:
            out.append({"contender": c, "system prompt": PROMPTS[c], "profile": "none",
                        "BFCL functions": functions, "control tools": [], "file tools": [],
                        "ends a turn": "an answer without a call",
                        "calls per turn": calls_per_turn})
            continue
        try:  # as the worker loads it: the endpoint's profile applied
            cfg = load_config(job_config(case, c)).config
        except ConfigError:  # a policy of the worker's environment: the config as written
            cfg = load_config(job_config(case, c), policy=False).config
        files = list(cfg.tools.workspace)
        tactical = cfg.phase_settings.tactical_workspace
        where = ("strategic phases only" if files and tactical == [] else
                 "every phase" if files else "")
        out.append({"contender": c, "system prompt": PROMPTS.get(c, "switchback's"),
                    "profile": cfg.llm.profile or "none", "BFCL functions": functions,
                    "control tools": CONTROL_TOOLS.get(c, []),
                    "file tools": [*files, *([f"({where})"] if where else [])],
                    "ends a turn": "a completion the workflow accepts",
                    "calls per turn": calls_per_turn})
    return out


def table(found: Sequence[dict[str, Any]]) -> str:
    """The rows as markdown (lists joined, counts of them in front)."""
    heads = list(found[0]) if found else []

    def cell(v: Any) -> str:
        if isinstance(v, list):
            names = [x for x in v if not str(x).startswith("(")]
            return f"{len(names)}: {' '.join(map(str, v))}" if v else "0"
        return str(v)

    lines = ["| " + " | ".join(heads) + " |", "|" + " --- |" * len(heads)]
    lines += ["| " + " | ".join(cell(r[h]) for h in heads) + " |" for r in found]
    return "\n".join(lines)


__all__ = ["BASELINE", "CONTROL_TOOLS", "PROMPTS", "rows", "table"]
