"""`todos.yaml`, the file the strategic phase writes and the gate checks.

Pure functions: `todo_write` renders the file with `todos_yaml`; the `load_todos`
activity reads it and checks it with `parse_todos_yaml`. Every rejection names its
reason, in words the model can act on.
"""

from __future__ import annotations

import yaml

from workflows.contract import LoadTodosResult, TodoSpec


def parse_todos_yaml(text: str | None, min_todos: int, max_todos: int) -> LoadTodosResult:
    """Check `todos.yaml` the way the gate does."""
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


def _reject(reason: str) -> LoadTodosResult:
    return LoadTodosResult(ok=False, reason=reason)


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]
