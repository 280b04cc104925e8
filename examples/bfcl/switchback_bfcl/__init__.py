"""BFCL's multi-turn benchmark as a switchback tool package.

The functions of the eight API classes of the Berkeley Function Calling Leaderboard's
multi-turn categories (bfcl-eval, Apache-2.0) are switchback tools (`tools.TOOLS`, the
entry point); a case's API state lives in the job's workspace between calls and every
executed call is recorded per turn in BFCL's call-string form (`state.py`); `cases.py`
loads cases, ground truth and function docs; `check.py` scores a run with BFCL's checker.

A job runs a case from its input alone: the case is an inline document
(`job_documents(case)`), the instructions the first user turn (`turn_text(case, 0)`), the
tools `tool_names(case, 0)`; each later user turn is a follow-up instruction (the `instruct`
update), whose heading in instructions.md tells the tools which turn they record.
`runner.py` and `baseline.py` run cases as jobs and as a plain loop (`switchback bfcl`,
cli.py).

The names below load on first use: `switchback <command>` imports cli.py at every CLI
start, and bfcl-eval must not load then.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"cases": ("function_docs", "functions", "ground_truth", "load_case", "load_cases",
                    "tool_names", "turn_messages", "turn_text"),
          "check": ("CheckResult", "check_calls", "check_files", "check_workspace"),
          "state": ("CALLS_PATH", "CASE_PATH", "INSTRUCTIONS_PATH", "call_string",
                    "case_document", "job_documents", "turn_of")}
_MODULE = {name: module for module, names in _WHERE.items() for name in names}
__all__ = sorted(_MODULE)


def __getattr__(name: str) -> Any:
    if name in _MODULE:
        return getattr(importlib.import_module(f"switchback_bfcl.{_MODULE[name]}"), name)
    raise AttributeError(f"module 'switchback_bfcl' has no attribute {name!r}")
