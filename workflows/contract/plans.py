"""Whether a plan repeats work already done or the ritual's own todos: one rule for the gate
on todos.yaml (activities/storage/workspace.py, at the last strategic todo) and for
`todo_write` itself (workflows/strategies/ritual.py: a 1.5B model wrote the bootstrap's own
todos with todo_write again and again and never reached the gate). Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence

from workflows.contract.requests import TodoSet

SIMILAR = 0.75  # share of words two todos of 6+ words have in common to be the same task


def repeated_plan(todos: Sequence[str], avoid: Sequence[TodoSet]) -> str | None:
    """Why the plan (its todos' texts) repeats work already done or the ritual's own todos,
    or None: half or more of its todos (at least one) are the same tasks as those of one set
    in `avoid` (the same text, words and case aside; with the set's `similar`, the small
    model profile's, also mostly the same words, unless both name files and not the same:
    "Write notes/alpha.md ..." and "Write notes/gamma.md ..." are different work; with the
    set's `unnumbered`, a todo's list marker aside: a model that copies a numbered list keeps
    the numbers)."""
    for s in avoid:
        new = [(t, _norm(_unmarked(t) if s.unnumbered else t), _files(t)) for t in todos]
        ref = [(_norm(x), _files(x)) for x in s.todos]
        same = [text for text, n, files in new if any(
            n == r or s.similar and _similar(n, r) and not (files and other and files != other)
            for r, other in ref)]
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


_FILE = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,5}\b")


def _files(text: str) -> set[str]:
    """The file names a todo names: two todos on different files are different work."""
    return set(_FILE.findall(text))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _similar(a: str, b: str) -> bool:
    """The same task: the same words, or (6 words or more) mostly the same words, or one a
    cut copy of the other. Short todos that differ in one word ("write notes/a.md", "write
    notes/b.md") are different tasks."""
    if a == b:
        return True
    wa, wb = set(a.split()), set(b.split())
    short, common = min(len(wa), len(wb)), len(wa & wb)
    return short >= 6 and (common / len(wa | wb) >= SIMILAR or common / short >= 0.9)
