"""The gate on `job_complete` (config `completion.expect_lines`), for any strategy.

A model that calls job_complete with its deliverables short of what the task asks for (a
1.5B model wrote `notes/apples.md` without its `# Apples` heading, then finished) is told
what is missing and goes on working, at most `completion.max_refusals` times; after that the
job ends `stuck` (never `completed` with its deliverables short) and its result's notes say
what was still missing. Without `expect_lines`,
or for a job recorded before the gate (patch `completion-gate`), job_complete is taken as
it comes.

With `completion.complete_when_met` the last step is the workflow's: a tactical phase that
did all its todos with every file holding its lines ends the job `completed`, its summary
starting "Completed by the workflow" (`when_met`, patch `complete-when-met`). The 1.5B
model wrote the three files right, then planned again and never called job_complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeVar

from workflows.contract import ResolvedConfig, ToolOutcome, layout
from workflows.contract.config import line_text
from workflows.strategies.base import (
    CheckLines,
    Decision,
    LinesChecked,
    ToolDecision,
    Versioned,
    Workspace,
)

COMPLETION_GATE = "completion-gate"  # Versioned: job_complete checked against expect_lines
GATE_AT_TRANSITION = "completion-at-transition"  # Versioned: expect_lines at a transition
GATE_AT_REWIND = "completion-at-rewind"  # Versioned: ... and at a rewind phase's start
AT_PHASE_START = {"transition": GATE_AT_TRANSITION, "rewind": GATE_AT_REWIND}  # variant ->
TODO_LINES = "todo-expected-lines"  # Versioned: a todo's deliverable checked for its lines
TODO_RESTATED = "todo-restated"  # Versioned: ... and, short of them, restated as the mend
TODO_RESTATED_LINES = "todo-restated-lines"  # Versioned: ... or, with no mend, as its lines
COMPLETE_WHEN_MET = "complete-when-met"  # Versioned: the workflow completes a job itself
QUIET_END_GATED = "quiet-end-gated"  # Versioned: a job ended without job_complete is checked
BY_WORKFLOW = "Completed by the workflow"  # how such a job's summary starts
T = TypeVar("T")


def expected(cfg: ResolvedConfig, paths: list[str] | None = None) -> CheckLines | None:
    """The check of the config's expect_lines (only those of `paths` that list lines, when
    given), or None when there is nothing to check."""
    lines = cfg.config.completion.expect_lines
    wanted = sorted(lines.items()) if paths is None else [
        (p, lines[p]) for p in sorted(set(paths)) if lines.get(p)]
    return CheckLines(tuple((p, tuple(w)) for p, w in wanted)) if wanted else None


def checked(patch: str, check: CheckLines | None,
            then: Callable[[list[str]], T | Workspace[T]],
            before: Callable[[], T | Workspace[T]]) -> T | Workspace[T]:
    """`then(what the files lack)` for a job on `patch`'s path, `before()` for a job
    recorded before it or with nothing to check: the one shape of every check here."""
    if check is None:
        return before()
    return Workspace([Versioned(patch)], lambda v: Workspace(
        [check], lambda r: then(list(r[0]))) if v[0] else before())


def todo_note(cfg: ResolvedConfig, paths: list[str]) -> str:
    """For the todo block: the lines the files a todo names must hold ("" for none). The 1.5B
    model's own todo read "Write notes/apples.md with two lines: Apples grow on ...", the
    heading lost, and it wrote just that."""
    lines = cfg.config.completion.expect_lines
    parts = [f"{p}: " + ", ".join(line_text(x) for x in lines[p]) for p in paths if lines.get(p)]
    return ("Its file must hold these lines exactly, each on a line of its own "
            f"(completion.expect_lines): {'; '.join(parts)}") if parts else ""


def plan_example(cfg: ResolvedConfig, paths: list[str] | None = None) -> str:
    """A todo_write call that plans the config's deliverables (`paths`: those of them still
    short), one todo per file, for a refused plan's message ("" without expect_lines). The
    1.5B model, refused for copying the bootstrap's todos, copied them again: it copies
    what it is shown."""
    todos = deliverable_todos(cfg, sorted(cfg.config.completion.expect_lines)
                              if paths is None else paths)
    if not todos:
        return ""
    return ("The files this job must deliver are listed in completion.expect_lines; a plan "
            "of one todo per file not yet done, for example: todo_write(phase=\"Deliverables\","
            f" todos={json.dumps(todos, ensure_ascii=False)})")


def deliverable_todos(cfg: ResolvedConfig, paths: list[str]) -> list[dict[str, object]]:
    """One todo per file of `paths` that expect_lines lists lines for (at most 10): "Write
    <file> with these lines: ..."."""
    lines = cfg.config.completion.expect_lines
    return [{"id": n, "content": f"Write {p} with these lines: " + " / ".join(
        x if isinstance(x, str) else x.describe for x in lines[p])}
        for n, p in enumerate([p for p in paths if lines.get(p)][:10], 1)]


def short_of(cfg: ResolvedConfig, problems: list[str]) -> list[str]:
    """The files of expect_lines that `problems` (a check's) says fall short, in order."""
    return [p for p in sorted(cfg.config.completion.expect_lines)
            if any(x.startswith(f"{p} ") for x in problems)]


def plan_file_example(cfg: ResolvedConfig, path: str) -> str:
    """A write of main_plan.md that lists the config's deliverables, for a refusal that asks
    for the plan ("" for another file or without expect_lines). Refused for writing
    output/summary.md when main_plan.md was asked for, the 1.5B model wrote output/summary.md
    again, alternating with a refused todo_complete (eval round 10): both refusals now show
    the one call to make."""
    lines = cfg.config.completion.expect_lines
    if path != layout.PLAN or not lines:
        return ""
    body = "# Plan\n" + "".join(
        f"- {p}: " + " / ".join(x if isinstance(x, str) else x.describe for x in lines[p]) + "\n"
        for p in sorted(lines)[:10]) + "Next: a tactical phase writes these files, one todo each.\n"
    return (f"write_file(path={json.dumps(path)}, "
            f"content={json.dumps(body, ensure_ascii=False)})")


def status_note(cfg: ResolvedConfig, problems: list[str]) -> str:
    """What a transition or rewind phase's first message says of the deliverables (the 1.5B
    model, its files all written, planned the ritual's own todos again instead of
    job_complete; in a rewind phase it wrote the rewind's own todo as the plan, again and
    again, with two of three files missing)."""
    files = ", ".join(sorted(cfg.config.completion.expect_lines))
    if not problems:
        return (f"\n\nEvery deliverable this job expects is in place ({files}: checked "
                "against completion.expect_lines). If nothing else is left to do, call "
                "job_complete now.")
    return ("\n\nThe deliverables are not complete yet: " + "; ".join(problems[:20]) + ". The "
            "next todos are the work that makes them so, one per file (\"Write <file> with "
            "...\").")


def when_met(cfg: ResolvedConfig, phase: int, finish: Callable[[str], Decision],
             otherwise: Callable[[], Decision]) -> Decision:
    """At the end of tactical phase `phase`: `finish(summary)` when the config says
    `complete_when_met` and every file holds its lines, `otherwise()` else."""
    check = expected(cfg) if cfg.config.completion.complete_when_met else None
    files = ", ".join(sorted(cfg.config.completion.expect_lines))
    summary = (f"{BY_WORKFLOW}: tactical phase {phase} did all its todos and every "
               f"deliverable holds the lines completion.expect_lines asks for ({files}); "
               "the model had not called job_complete (completion.complete_when_met).")
    return checked(COMPLETE_WHEN_MET, check,
                   lambda lack: otherwise() if lack else finish(summary), otherwise)


def without_job_complete(cfg: ResolvedConfig,
                         end: Callable[[str | None, str], Decision]) -> Decision:
    """A job that ends without job_complete (react: the model stopped calling tools, its last
    answer taken as the result): `end(None, "")`, completed, when the files hold their lines
    or there are none to check; else `end("stuck", what is still missing)`. (The 1.5B model
    under react wrote its calls as text four times and the job ended `completed` with
    nothing written.)"""
    return checked(QUIET_END_GATED, expected(cfg), lambda lack: end(
        "stuck", "the model stopped calling tools; still missing: " + "; ".join(lack[:20]))
        if lack else end(None, ""), lambda: end(None, ""))


def ask(cfg: ResolvedConfig, refused: int, accept: Callable[[str], ToolDecision],
        refuse: Callable[[list[str]], ToolDecision]) -> ToolDecision:
    """`accept(note)` when the files hold their lines (note "") or no more refusals are left
    (note: what is still missing; the strategy then ends the job `stuck`);
    `refuse(problems)` otherwise."""
    def decide(problems: list[str]) -> ToolDecision:
        if not problems:
            return accept("")
        if refused >= cfg.config.completion.max_refusals:
            return accept(f"stopped after {refused} refused job_complete calls "
                          f"(completion.max_refusals); still missing: {'; '.join(problems)}")
        return refuse(problems)

    return checked(COMPLETION_GATE, expected(cfg), decide, lambda: accept(""))


def refusal(problems: list[str], refused: int, cfg: ResolvedConfig, how: str) -> ToolOutcome:
    """What the model is told when its job_complete is refused (`how`: how to go on)."""
    listed = "; ".join(problems[:20]) + ("; ..." if len(problems) > 20 else "")
    return ToolOutcome(ok=False, code="job_incomplete", summary=(
        f"Error [job_incomplete]: job_complete refused ({refused} of "
        f"{cfg.config.completion.max_refusals}): the deliverables are not what the task asks "
        f"for: {listed}. {how}{fix_example(cfg, problems)} Then call job_complete again."))


def fix_example(cfg: ResolvedConfig, problems: list[str]) -> str:
    """The write that mends the first file a refusal names, to copy ("" when none is named).
    Under react the 1.5B model, told "notes/apples.md does not exist", rewrote
    output/summary.md and called job_complete again, three times (eval round 9)."""
    lines = cfg.config.completion.expect_lines
    for path in sorted(lines):
        if lines[path] and any(p.startswith(f"{path} ") for p in problems):
            want = " and ".join(json.dumps(line, ensure_ascii=False) if isinstance(line, str)
                                else line_text(line) for line in lines[path])
            plural = "s" if len(lines[path]) > 1 else ""
            return (f" The first: write_file(path={json.dumps(path, ensure_ascii=False)}, "
                    f"content=...) with the line{plural} {want}, each on a line of its own, "
                    "and what instructions.md asks for.")
    return ""


def mend_example(cfg: ResolvedConfig, found: LinesChecked) -> str:
    """How a todo's file that lacks lines is mended: the write of the first file `found`
    mended, to copy; else the lines each file must hold. Told only "Write the file again
    with exactly those lines", the 1.5B model wrote the same heading-less sentence again,
    5 to 10 times, in 6 of 10 runs (eval round 11)."""
    for path, text in sorted(found.mends.items()):
        return ("Write it again with every line it must hold, this call as it is: "
                f"write_file(path={json.dumps(path, ensure_ascii=False)}, "
                f"content={json.dumps(text, ensure_ascii=False)})")
    lines = cfg.config.completion.expect_lines
    named = sorted({p.split(" ", 1)[0] for p in found.problems} & set(lines))
    return "Write the file again with every one of these lines, each on a line of its own: " + \
        "; ".join(f"{p}: " + ", ".join(line_text(x) for x in lines[p]) for p in named) + "."


def restated(found: LinesChecked) -> str:
    """A todo whose file lacks lines, restated as the write of the first file `found` mended
    ("" when none could be)."""
    for path, text in sorted(found.mends.items()):
        return (f"Write {path} with exactly this content (its missing lines put in): "
                f"write_file(path={json.dumps(path, ensure_ascii=False)}, "
                f"content={json.dumps(text, ensure_ascii=False)})")
    return ""


def restated_lines(cfg: ResolvedConfig, found: LinesChecked) -> str:
    """A todo whose file lacks a line the check cannot put in (a line given by its shape,
    such as "a sentence about apples"), restated as the workflow's own todo for the first
    such file: "Write notes/apples.md with these lines: # Apples / a sentence about apples"
    ("" when no file of expect_lines is named). Eval round 14: under its own todo ("Write
    notes/apples.md with the content of the first line of instructions.md") the model wrote
    the heading alone ten times; under this wording, in the workflow's plan after the
    rewind, it wrote heading and sentence at the first try."""
    named = short_of(cfg, found.problems)
    todos = deliverable_todos(cfg, named[:1])
    return str(todos[0]["content"]) if todos else ""


def with_note(args: dict[str, object], note: str) -> dict[str, object]:
    """job_complete's arguments with the gate's note appended to its notes."""
    if not note:
        return args
    notes = str(args.get("notes") or "")
    return {**args, "notes": f"{notes}\n{note}".strip()}
