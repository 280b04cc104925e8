"""BFCL's multi-turn cases, ground truth and function docs, from the installed bfcl-eval.

Cases are loaded with BFCL's own `load_dataset_entry`, so a case is exactly what BFCL's
generation step works with: its `function` list holds the docs offered from the first
turn (with BFCL's " Note that the provided function is in Python 3 syntax." hint), and for
miss_func its `missed_function` maps a turn index (a string) to the docs withheld until
that turn. BFCL adds them when that turn starts; the turn has no user message of its own,
the model is told `DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC` instead
(`turn_messages`). The cases are shared and cached: do not modify them.
"""

from __future__ import annotations

import functools
from typing import Any

from switchback_bfcl import _bfcl

CATEGORIES = ("base", "long_context", "miss_func", "miss_param")


def category_of(case_id: str) -> str:
    """'multi_turn_miss_func_12' -> 'miss_func'."""
    category = case_id.rsplit("_", 1)[0].removeprefix("multi_turn_")
    if category not in CATEGORIES:
        raise KeyError(f"{case_id!r} is not a case of BFCL's multi-turn categories "
                       f"{', '.join(CATEGORIES)}")
    return category


@functools.cache
def _cases(category: str) -> dict[str, dict[str, Any]]:
    if category not in CATEGORIES:
        raise KeyError(f"unknown category {category!r}: one of {', '.join(CATEGORIES)}")
    return {e["id"]: e for e in _bfcl.utils.load_dataset_entry(f"multi_turn_{category}")}


@functools.cache
def _answers(category: str) -> dict[str, list[list[str]]]:
    _cases(category)  # validates the name
    return {e["id"]: e["ground_truth"]
            for e in _bfcl.utils.load_ground_truth_entry(f"multi_turn_{category}")}


def load_cases(category: str) -> list[dict[str, Any]]:
    """Every case of a category ('base', 'long_context', 'miss_func', 'miss_param')."""
    return list(_cases(category).values())


def load_case(case_id: str) -> dict[str, Any]:
    """One case by id, e.g. 'multi_turn_base_0'."""
    return _cases(category_of(case_id))[case_id]


def ground_truth(case_id: str) -> list[list[str]]:
    """The case's ground truth: per turn, the calls in BFCL's call-string form."""
    return _answers(category_of(case_id))[case_id]


@functools.cache
def function_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """The function docs of one API class as bfcl-eval ships them (no hint added)."""
    path = _bfcl.MULTI_TURN_FUNC_DOC_PATH / _bfcl.MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
    return tuple(_bfcl.utils.load_file(path, use_lock=False))


def functions(case: dict[str, Any], turn: int) -> list[dict[str, Any]]:
    """The function docs BFCL offers the model in `turn` (0-based), in BFCL's order: the
    case's functions, then for miss_func those withheld until this turn or an earlier one."""
    docs = list(case["function"])
    for at, missed in sorted(case.get("missed_function", {}).items(), key=lambda kv: int(kv[0])):
        if int(at) <= turn:
            docs += missed
    return docs


def tool_names(case: dict[str, Any], turn: int) -> list[str]:
    """The names of the tools to offer in `turn`: the case's classes' functions (for
    miss_func without those still withheld)."""
    return [doc["name"] for doc in functions(case, turn)]


def turn_messages(case: dict[str, Any], turn: int) -> list[dict[str, Any]]:
    """The user messages that start `turn`: the case's, or on a miss_func turn that adds the
    withheld functions, BFCL's prompt that says so."""
    messages = list(case["question"][turn])
    if str(turn) in case.get("missed_function", {}):
        assert not messages, f"{case['id']}: a turn that adds functions has no user message"
        messages = [{"role": "user",
                     "content": _bfcl.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC}]
    return messages


def turn_text(case: dict[str, Any], turn: int) -> str:
    """`turn`'s user message(s) as one text: a job's instructions (turn 0) or the follow-up
    instruction that starts the turn (several messages joined by a blank line)."""
    return "\n\n".join(str(m["content"]) for m in turn_messages(case, turn)).strip()


def select(categories: list[str], count: int | None = None,
           ids: list[str] | None = None) -> list[dict[str, Any]]:
    """Cases to run: `ids` (any category) if given, else the first `count` (None: all) of
    each category in BFCL's order, the categories taking turns (base_0, miss_param_0,
    base_1, ...: a run stopped early has as many cases of each)."""
    if ids:
        return [load_case(i) for i in ids]
    per = [load_cases(cat)[:count] for cat in categories]
    return [c for i in range(max(map(len, per), default=0)) for cs in per if i < len(cs)
            for c in [cs[i]]]
