"""The protected todo block shown on every model call: `todo_block`, `current_index`."""

from __future__ import annotations

from switchback.workflows.contract import Todo
from switchback.workflows.todos import RULE, current_index, todo_block


def todos(*statuses: str) -> list[Todo]:
    return [Todo(id=i, content=f"task {i}", status=s) for i, s in enumerate(statuses, start=1)]


def test_current_is_the_first_pending_todo() -> None:
    assert current_index(todos("pending", "pending")) == 0
    assert current_index(todos("completed", "cancelled", "pending", "pending")) == 2
    assert current_index(todos("completed", "cancelled")) is None
    assert current_index([]) is None


def test_block_shows_phase_marks_current_progress_and_instruction() -> None:
    block = todo_block("Extract requirements", "tactical", 3,
                       todos("completed", "cancelled", "pending", "pending"))
    lines = block.splitlines()
    assert lines[0] == RULE and lines[-1] == RULE
    assert "ACTIVE TODO LIST" in lines[1]
    assert "Phase 3 (tactical): Extract requirements" in lines
    assert "[x] 1. task 1" in lines
    assert "[-] 2. task 2" in lines
    assert "[ ] 3. task 3      ← CURRENT" in lines
    assert "[ ] 4. task 4" in lines
    assert block.count("← CURRENT") == 1
    assert "Progress: 1/4 tasks complete" in lines
    assert lines[-3:-1] == ["NEXT STEP (task 3): task 3", "When it is done, call todo_complete()."]


def test_block_uses_todo_ids_not_positions() -> None:
    items = [Todo(id=10, content="a", status="completed"), Todo(id=20, content="b")]
    block = todo_block("P", "strategic", 1, items)
    assert "[ ] 20. b      ← CURRENT" in block
    assert "NEXT STEP (task 20): b\n" in block


def test_block_when_everything_is_done() -> None:
    block = todo_block("Wrap up", "strategic", 7, todos("completed", "completed", "cancelled"))
    assert "← CURRENT" not in block and "[ ]" not in block
    assert "Progress: 2/3 tasks complete" in block
    assert "INSTRUCTION: All tasks are complete." in block


def test_block_is_deterministic() -> None:
    items = todos("completed", "pending")
    assert todo_block("P", "tactical", 2, items) == todo_block("P", "tactical", 2, items)
