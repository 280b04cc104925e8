"""The strategic->tactical gate: `parse_todos_yaml` / `check_todos_document`."""

from __future__ import annotations

import pytest

from switchback.activities.storage.todos_file import (
    check_todos_document,
    parse_todos_yaml,
    todos_yaml,
)
from switchback.workflows.contract import TodoSpec


def doc(n: int = 5, **extra: object) -> dict:
    return {"phase": "Extract", "todos": [{"id": i, "content": f"task {i}"}
                                          for i in range(1, n + 1)], **extra}


def reason(data: object, lo: int = 5, hi: int = 20) -> str:
    result = check_todos_document(data, lo, hi)
    assert not result.ok and result.todos == []
    return result.reason


def test_accepts_a_valid_document() -> None:
    text = "phase: Extract\ntodos:\n" + "".join(
        f"  - id: {i}\n    content: '  task {i}  '\n" for i in range(1, 6))
    result = parse_todos_yaml(text, 5, 20)
    assert result.ok and result.reason == "" and result.title == "Extract"
    assert [(t.id, t.content) for t in result.todos] == [(i, f"task {i}") for i in range(1, 6)]


def test_title_falls_back_to_description_and_is_capped() -> None:
    data = doc(description="d" * 300)
    del data["phase"]
    assert check_todos_document(data, 5, 20).title == "d" * 200


def test_rejects_missing_file() -> None:
    result = parse_todos_yaml(None, 5, 20)
    assert not result.ok and "not found" in result.reason and "todo_write" in result.reason


def test_rejects_invalid_yaml() -> None:
    result = parse_todos_yaml("todos: [1, 2\nphase: {", 5, 20)
    assert not result.ok and result.reason.startswith("todos.yaml is not valid YAML:")
    assert "\n" not in result.reason


@pytest.mark.parametrize("data", [None, "text", [1, 2], {"phase": "x"}, {"todos": "a, b"},
                                  {"todos": {"1": "a"}}])
def test_rejects_document_without_todos_list(data: object) -> None:
    assert "mapping with a 'todos' list" in reason(data)


@pytest.mark.parametrize("n", [0, 4, 21])
def test_rejects_count_outside_bounds(n: int) -> None:
    assert reason(doc(n)) == f"Expected 5-20 todos, got {n}."


def test_bounds_are_inclusive() -> None:
    assert check_todos_document(doc(2), 2, 3).ok and check_todos_document(doc(3), 2, 3).ok
    assert reason(doc(4), 2, 3) == "Expected 2-3 todos, got 4."


def test_rejects_item_that_is_not_a_mapping() -> None:
    data = doc()
    data["todos"][2] = "just text"
    assert reason(data) == "Todo #3 must be a mapping with 'id' and 'content'."


@pytest.mark.parametrize("bad_id", [None, "1", 1.0, True, False, [1]])
def test_rejects_non_integer_id(bad_id: object) -> None:
    data = doc()
    data["todos"][1]["id"] = bad_id
    assert reason(data) == f"Todo #2: 'id' must be an integer, got {bad_id!r}."


@pytest.mark.parametrize("content", [None, "", "   \n", 42, ["a"]])
def test_rejects_empty_or_non_string_content(content: object) -> None:
    data = doc()
    data["todos"][4]["content"] = content
    assert reason(data) == "Todo #5: 'content' must be a non-empty string."


def test_rejects_duplicate_ids() -> None:
    data = doc()
    data["todos"][3]["id"] = 2
    assert reason(data) == "Todo #4: duplicate id 2."


def test_todos_yaml_round_trips() -> None:
    todos = [TodoSpec(id=i, content=c) for i, c in enumerate(
        ["yes", "123", "- dash", "key: value # not a comment", "Ümläut ← arrow", "x" * 150],
        start=1)]
    text = todos_yaml("Phase: two", "what it does", todos)
    result = parse_todos_yaml(text, 5, 20)
    assert result.ok and result.title == "Phase: two" and result.todos == todos
