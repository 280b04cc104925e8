"""Builders for scripted-model steps: what a well-behaved (or not) model would send."""

from __future__ import annotations


def call(name: str, **args) -> dict:
    return {"name": name, "arguments": args}


def step(*calls: dict, content: str | None = None) -> dict:
    s: dict = {"tool_calls": list(calls)} if calls else {}
    if content is not None:
        s["content"] = content
    return s


def todos(n: int, prefix: str = "Task") -> list[dict]:
    return [{"id": i, "content": f"{prefix} {i}"} for i in range(1, n + 1)]


def bootstrap(next_title: str = "Phase A", n_todos: int = 5) -> list[dict]:
    """The 4 bootstrap todos done properly (workspace.md and main_plan.md written before
    their todos are completed, one todo_complete per turn), ending with an accepted
    todos.yaml written by this phase's todo_write."""
    return [
        step(call("list_files")),
        step(call("read_file", path="instructions.md")),
        step(call("write_file", path="workspace.md", content="# Workspace\n\nexplored\n"),
             call("todo_complete", notes="explored")),
        step(call("write_file", path="main_plan.md", content="# Plan\n\n- phase A\n"),
             call("todo_complete", notes="planned")),
        step(call("todo_complete", notes="divided")),
        step(call("todo_write", phase=next_title, description="d", todos=todos(n_todos))),
        step(call("todo_complete", notes="todos written")),
    ]


def tactical(n_todos: int = 5, tag: str = "a") -> list[dict]:
    """One write + todo_complete per todo."""
    return [step(call("write_file", path=f"work/{tag}_{i}.md", content=f"result {tag} {i}\n"),
                 call("todo_complete", notes=f"did {tag} {i}"))
            for i in range(1, n_todos + 1)]


def transition(next_title: str, n_todos: int = 5, memory: str = "more") -> list[dict]:
    """A transition phase whose new todos are not the earlier phases' (the gate refuses a
    plan that repeats done work)."""
    return [
        step(call("list_files", path="archive")),
        step(call("write_file", path="workspace.md",
                  content=f"# Workspace\n\n{memory} (before {next_title})\n"),
             call("todo_complete", notes="summarized")),
        step(call("write_file", path="main_plan.md", content=f"# Plan\n\n- next: {next_title}\n"),
             call("todo_complete", notes="plan updated")),
        step(call("todo_write", phase=next_title, description="d",
                  todos=todos(n_todos, prefix=f"{next_title} task")),
             call("todo_complete", notes="todos written")),
    ]


def finish(summary: str = "done", deliverables: list[str] | None = None) -> list[dict]:
    """The last transition phase: its todos done (workspace.md and main_plan.md updated),
    then job_complete."""
    return [
        step(call("write_file", path="workspace.md", content=f"# Workspace\n\n{summary}\n"),
             call("todo_complete", notes="memory")),
        step(call("write_file", path="main_plan.md", content="# Plan\n\nall done\n"),
             call("todo_complete", notes="plan")),
        step(call("job_complete", summary=summary, deliverables=deliverables or [],
                  confidence=0.9, notes="")),
    ]


def full_job(tactical_phases: int = 3, n_todos: int = 5) -> list[dict]:
    """bootstrap -> (tactical -> transition) x N -> job_complete."""
    s = bootstrap("Phase 1", n_todos)
    for p in range(1, tactical_phases + 1):
        s += tactical(n_todos, tag=f"p{p}")
        s += transition(f"Phase {p + 1}", n_todos) if p < tactical_phases else finish(
            "all phases done", ["work/p1_1.md"])
    return s


# the todos the 1.5B model planned for its first tactical phase under phase_alternation in
# BFCL's multi_turn_miss_param_3 (bfcl-local-1): the strategic prompt's bullets, numbered
PROMPT_COPY = [
    "1. Explore the workspace with the file tools before you decide anything.",
    "2. Keep `workspace.md` current: what exists, what was learned, decisions, open problems.",
    "3. Keep `main_plan.md` current: the overall approach and its phases, with progress marked.",
    "4. Write the next phase's todos with todo_write: 1-20 concrete, checkable tasks for the "
    "tactical agent, who has the domain tools (as many as the work needs; never the todos of "
    "this list, never work that is already done).",
    "5. When the plan is fully executed and the deliverables exist, call job_complete."]
