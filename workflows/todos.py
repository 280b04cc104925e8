"""Todos: the strategic->tactical gate and the protected todo block (layer 2).

Pure functions only: the workspace activity reads `todos.yaml` and calls
`parse_todos_yaml`; the workflow renders `todo_block` before every model call.
"""

from __future__ import annotations

from typing import Literal

import yaml
from pydantic import BaseModel

from workflows.types import LoadTodosResult, TodoSpec

RULE = "═" * 67
THIN = "─" * 67


class Todo(BaseModel):
    id: int
    content: str
    status: Literal["pending", "completed", "cancelled"] = "pending"
    notes: str = ""


def parse_todos_yaml(text: str | None, min_todos: int, max_todos: int) -> LoadTodosResult:
    """Check `todos.yaml` the way the gate does; every rejection names its reason."""
    if text is None:
        return _reject("todos.yaml not found. Create it with todo_write.")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return _reject(f"todos.yaml is not valid YAML: {_one_line(e)}")
    return check_todos_document(data, min_todos, max_todos)


def check_todos_document(data: object, min_todos: int, max_todos: int) -> LoadTodosResult:
    if not isinstance(data, dict) or not isinstance(data.get("todos"), list):
        return _reject("todos.yaml must be a mapping with a 'todos' list.")
    items = data["todos"]
    if not min_todos <= len(items) <= max_todos:
        return _reject(f"Expected {min_todos}-{max_todos} todos, got {len(items)}.")
    todos: list[TodoSpec] = []
    seen: set[int] = set()
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            return _reject(f"Todo #{n} must be a mapping with 'id' and 'content'.")
        tid, content = item.get("id"), item.get("content")
        if not isinstance(tid, int) or isinstance(tid, bool):
            return _reject(f"Todo #{n}: 'id' must be an integer, got {tid!r}.")
        if not isinstance(content, str) or not content.strip():
            return _reject(f"Todo #{n}: 'content' must be a non-empty string.")
        if tid in seen:
            return _reject(f"Todo #{n}: duplicate id {tid}.")
        seen.add(tid)
        todos.append(TodoSpec(id=tid, content=content.strip()))
    title = data.get("phase") or data.get("description") or ""
    return LoadTodosResult(ok=True, title=str(title)[:200], todos=todos)


def todos_yaml(title: str, description: str, todos: list[TodoSpec]) -> str:
    doc = {"phase": title, "description": description,
           "todos": [{"id": t.id, "content": t.content} for t in todos]}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def current_index(todos: list[Todo]) -> int | None:
    """The current todo is the first one still pending."""
    return next((i for i, t in enumerate(todos) if t.status == "pending"), None)


def todo_block(title: str, kind: str, number: int, todos: list[Todo]) -> str:
    """Layer 2: the active todo list, shown on every model call."""
    cur = current_index(todos)
    lines = [RULE, "ACTIVE TODO LIST".center(67), RULE, "",
             f"Phase {number} ({kind}): {title}", ""]
    for i, t in enumerate(todos):
        mark = "[x]" if t.status == "completed" else "[-]" if t.status == "cancelled" else "[ ]"
        lines.append(f"{mark} {t.id}. {t.content}" + ("      ← CURRENT" if i == cur else ""))
    done = sum(t.status == "completed" for t in todos)
    lines += ["", f"Progress: {done}/{len(todos)} tasks complete", "", THIN]
    if cur is None:
        lines.append("INSTRUCTION: All tasks are complete.")
    else:
        lines.append(f"INSTRUCTION: Complete task {todos[cur].id}, then call todo_complete()")
    lines.append(RULE)
    return "\n".join(lines)


def _reject(reason: str) -> LoadTodosResult:
    return LoadTodosResult(ok=False, reason=reason)


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]
