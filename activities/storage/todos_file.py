"""`todos.yaml`, the file the strategic phase writes and the gate checks.

Pure functions: `todo_write` renders the file with `todos_yaml`; the `load_todos` activity
reads it and checks it with `parse_todos_yaml`, then that it is this phase's
(`stale_problem`: the marker `todo_write` leaves in `.switchback/`, with the conversation it
was written in and the file's sha256) and no repeat of work already done
(`workflows.contract.plans.repeated_plan`: the predefined strategic todos, an earlier
phase's completed todos). Every rejection names its reason, in words the model can act on.
"""

from __future__ import annotations

import hashlib

import yaml

from switchback.workflows.contract import LoadTodosResult, TodoSpec


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


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def stale_problem(marker: dict | None, conversation: str, text: str) -> str | None:
    """Why todos.yaml is not the one todo_write wrote in `conversation`, or None."""
    again = "Call todo_write with the todos for the next phase, then todo_complete again."
    if not marker:
        return f"todos.yaml was not written by todo_write. {again}"
    if marker.get("sha256") != digest(text):
        return f"todos.yaml was changed after todo_write wrote it (by write_file?). {again}"
    if marker.get("conversation") != conversation:
        where = str(marker.get("conversation", ""))
        n = where.rsplit("_", 1)[-1].lstrip("0") or "?"
        return (f"todos.yaml is left over from phase {n} (todo_write wrote it then), it is not "
                f"this phase's plan. {again}")
    return None


def _reject(reason: str) -> LoadTodosResult:
    return LoadTodosResult(ok=False, reason=reason)


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]
