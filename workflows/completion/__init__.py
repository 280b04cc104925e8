"""Verified completion (docs/completion.md): the service the orchestrator enters at a claim
and at an end (service.py), its carried state (state.py) and its verdicts (verdicts.py)."""

from switchback.workflows.completion.service import UPGRADABLE, Completion
from switchback.workflows.completion.state import CompletionState, DeliverablesChecked, valid
from switchback.workflows.completion.verdicts import BY_WORKFLOW

__all__ = ["BY_WORKFLOW", "UPGRADABLE", "Completion", "CompletionState", "DeliverablesChecked",
           "valid"]
