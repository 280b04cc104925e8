"""Scripted-model runs of one small job under each strategy (tests, histories, bench).

The job: write two notes, notes/a.md and notes/b.md, and a report.md that joins them.
Each function returns what a well-behaved model would answer under that strategy: a
script for the job and, for `nested`, one per child job (keyed by the child's id).
"""

from __future__ import annotations

from tests.scripts import call, step

INSTRUCTIONS = ("# Two notes and a report\n\nWrite notes/a.md about alpha and notes/b.md "
                "about beta, then report.md that joins them.\n")
A, B, REPORT = "alpha: the first letter\n", "beta: the second letter\n", "# Report\n\nalpha, beta\n"


def react(deliverables: tuple[str, ...] = ("report.md", "notes/a.md", "notes/b.md")
          ) -> list[dict]:
    """`deliverables`: what its job_complete names (a rewind that lands during the call that
    writes notes/a.md drops that write)."""
    return [
        step(call("read_file", path="instructions.md")),
        step(call("write_file", path="notes/a.md", content=A)),
        step(call("write_file", path="notes/b.md", content=B)),
        step(call("write_file", path="report.md", content=REPORT)),
        step(call("job_complete", summary="wrote the notes and the report",
                  deliverables=list(deliverables), confidence=0.9)),
    ]


def phase_alternation() -> list[dict]:
    """Bootstrap (4 todos), one tactical phase of 3 todos, the closing strategic phase."""
    todos = [{"id": 1, "content": "Write notes/a.md about alpha"},
             {"id": 2, "content": "Write notes/b.md about beta"},
             {"id": 3, "content": "Write report.md joining the notes"}]
    return [
        step(call("list_files")),
        step(call("write_file", path="workspace.md", content="# Workspace\n\nnotes job\n"),
             call("todo_complete", notes="explored")),
        step(call("write_file", path="main_plan.md", content="# Plan\n\n1 phase\n"),
             call("todo_complete", notes="planned")),
        step(call("todo_complete", notes="one phase")),
        step(call("todo_write", phase="Notes", description="the notes", todos=todos),
             call("todo_complete", notes="todos written")),
        step(call("write_file", path="notes/a.md", content=A), call("todo_complete")),
        step(call("write_file", path="notes/b.md", content=B), call("todo_complete")),
        step(call("write_file", path="report.md", content=REPORT), call("todo_complete")),
        step(call("todo_complete", notes="all written")),
        step(call("todo_complete", notes="memory")),
        step(call("todo_complete", notes="plan")),
        step(call("job_complete", summary="wrote the notes and the report",
                  deliverables=["report.md"], confidence=0.9)),
    ]


PLAN = [{"id": 1, "name": "Write notes/a.md", "detail": "alpha, one line"},
        {"id": 2, "name": "Write notes/b.md", "detail": "beta, one line", "after": []},
        {"id": 3, "name": "Write report.md", "detail": "join the two notes", "after": [1, 2]}]


def plan_revise_execute(revise: bool = True, fail_step: bool = True) -> list[dict]:
    """Plan -> evaluation 0.5 (below 0.7) -> revised plan -> 0.9 -> steps 1, 2; step 3 fails
    once -> the rest is replanned (step 4) -> done."""
    s: list[dict] = [step(call("list_files")),
                     step(call("submit_plan", steps=PLAN[:2] if revise else PLAN,
                               rationale="notes first"))]
    if revise:
        s += [step(call("read_file", path="instructions.md")),
              step(call("submit_evaluation", score=0.5, reasons="the report is missing")),
              step(call("submit_plan", steps=PLAN, rationale="notes, then the report"))]
    s += [step(call("submit_evaluation", score=0.9, reasons="complete"))]
    s += [step(call("write_file", path="notes/a.md", content=A)),
          step(call("step_result", status="done", summary="notes/a.md: alpha",
                    files=["notes/a.md"])),
          step(call("write_file", path="notes/b.md", content=B),
               call("step_result", status="done", summary="notes/b.md: beta",
                    files=["notes/b.md"]))]
    if fail_step:
        s += [step(call("step_result", status="failed", summary="report.md needs a title "
                        "the plan does not give")),
              step(call("submit_plan", steps=[{"id": 4, "name": "Write report.md with a "
                                               "title", "detail": "title: Report",
                                               "after": [1, 2]}]))]
    s += [step(call("write_file", path="report.md", content=REPORT)),
          step(call("step_result", status="done", summary="report.md joins alpha and beta",
                    files=["report.md"]))]
    return s


NESTED_TODOS = [{"id": 1, "content": "Write result.md about alpha"},
                {"id": 2, "content": "Write result.md about beta"}]


def nested(job_id: str, phase: int = 2) -> tuple[list[dict], dict[str, list[dict]]]:
    """The coordinator (bootstrap: 3 todos, one delegation of 2 children, a transition that
    writes the report and completes) and its two react children."""
    parent = [
        step(call("list_files")),
        step(call("write_file", path="workspace.md", content="# Workspace\n\nnotes job\n"),
             call("todo_complete", notes="explored")),
        step(call("write_file", path="main_plan.md", content="# Plan\n\ntwo children\n"),
             call("todo_complete", notes="planned")),
        step(call("todo_write", phase="Notes", description="one child per note",
                  todos=NESTED_TODOS), call("todo_complete", notes="todos written")),
        step(call("read_file", path=f"archive/phase_{phase}.yaml"),
             call("todo_complete", notes="both children done")),
        step(call("todo_complete", notes="memory")),
        step(call("write_file", path="report.md", content=REPORT),
             call("job_complete", summary="the children wrote the notes; report.md joins them",
                  deliverables=["report.md"], confidence=0.9)),
    ]
    children = {f"{job_id}-p{phase}-t{i}": child(text, i) for i, text in ((1, A), (2, B))}
    return parent, children


def child(text: str, i: int) -> list[dict]:
    return [step(call("write_file", path="result.md", content=text)),
            step(call("job_complete", summary=f"result.md written ({text.split(':')[0]})",
                      deliverables=["result.md"], confidence=0.9))]


def auto(complexity: str = "C") -> list[dict]:
    return [step(call("classify_task", complexity=complexity, reasons="one short task"))]
