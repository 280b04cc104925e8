"""The protected todo block (layer 2 of every model call), from the phase's todos.

Pure: the workflow renders `todo_block` before every model call of a phase.
"""

from __future__ import annotations

from switchback.workflows.contract import Todo

RULE = "═" * 67
THIN = "─" * 67


def current_index(todos: list[Todo]) -> int | None:
    """The current todo is the first one still pending."""
    return next((i for i, t in enumerate(todos) if t.status == "pending"), None)


def todo_block(title: str, kind: str, number: int, todos: list[Todo], note: str = "") -> str:
    """Layer 2: the active todo list, shown on every model call; `note`: more on the current
    todo (the lines its file must hold)."""
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
    else:  # the current task in full: a small model acts on the last lines it reads
        lines.append(f"NEXT STEP (task {todos[cur].id}): {todos[cur].content}")
        if note:
            lines.append(note)
        lines.append("When it is done, call todo_complete().")
    lines.append(RULE)
    return "\n".join(lines)
