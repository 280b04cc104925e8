"""Whether a plan repeats work already done or the ritual's own todos: one rule for the gate
on todos.yaml (activities/storage/workspace.py, at the last strategic todo) and for
`todo_write` itself (the `plan_repeats` guard: a plan refused only at the gate would be
written again and again before the model reaches it). Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence

from switchback.workflows.contract.requests import TodoSet


def repeated_plan(todos: Sequence[str], avoid: Sequence[TodoSet]) -> str | None:
    """Why the plan (its todos' texts) repeats work already done or the ritual's own todos,
    or None: half or more of its todos (at least one) are the same tasks as those of one set
    in `avoid` (the same text, words and case aside; with the set's `unnumbered`, a todo's
    list marker aside: a model that copies a numbered list keeps the numbers)."""
    for s in avoid:
        new = [(t, _norm(_unmarked(t) if s.unnumbered else t)) for t in todos]
        ref = {_norm(x) for x in s.todos}
        same = [text for text, n in new if n in ref]
        if same and 2 * len(same) >= len(new):
            return (f"the plan repeats {s.label} ({len(same)} of {len(new)} todos, e.g. "
                    f"{same[0][:120]!r}). That work is done or is not tactical work: plan "
                    "what is left of the task (instructions.md, main_plan.md), or call "
                    "job_complete if nothing is left.")
    return None


_MARKER = re.compile(  # "4. ", "(4) ", "- ", "* [ ] ", "Step 2: ", "Task 3) "
    r"^\s*(?:(?:step|todo|task)\s*(?=\(?\d))?(?:\(?\d+[.):](?!\d)|[-*\u2022])\s*(?:\[[ xX]?\]\s*)?",
    re.I)


def _unmarked(text: str) -> str:
    """`text` without its leading list marker: "4. Write ..." -> "Write ..."."""
    return _MARKER.sub("", text, count=1)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())
