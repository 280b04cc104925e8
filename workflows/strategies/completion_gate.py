"""The small model profile's completion rules (llm.profile: small; docs/profiles.md), and
the deliverables' status a strategic phase starts with.

With the profile, `small.expect_lines` names each deliverable file and the lines it
must hold; a todo's file that lacks them is shown mended, its todo restated, a plan held to
the files still short, and a strategic phase refused too often gets the workflow's plan of
them. Each answers a failure of a 1.5B model seen in the evals (docs/local-models.md).
Without the profile, `expected` is None and none of this applies: every job's completion is
verified by workflows/completion.py.
"""

from __future__ import annotations

import json
import re

from workflows import task_words
from workflows.contract import ResolvedConfig, layout
from workflows.contract.config import line_text
from workflows.strategies.base import (
    CheckLines,
    DeliverablesChecked,
    LinesChecked,
    workspace_folder_mended,
)
from workflows.strategies.ritual import small_profile
from workflows.task_files import LIST_ITEM, without_code

BY_WORKFLOW = "Completed by the workflow"  # how such a job's summary starts


def expected(cfg: ResolvedConfig, paths: list[str] | None = None) -> CheckLines | None:
    """The check of the config's expect_lines (only those of `paths` that list lines, when
    given), or None when there is nothing to check or the job is not on the small profile."""
    if not small_profile(cfg):
        return None
    lines = cfg.config.small.expect_lines
    wanted = sorted(lines.items()) if paths is None else [
        (p, lines[p]) for p in sorted(set(paths)) if lines.get(p)]
    return CheckLines(tuple((p, tuple(w)) for p, w in wanted)) if wanted else None


def todo_note(cfg: ResolvedConfig, paths: list[str], words: dict[str, str] | None = None
              ) -> str:
    """For the todo block: the lines the files a todo names must hold, else what the task
    says about them (`words`: task_words.about's, one note per passage); "" for none. The
    1.5B model's own todo read "Write notes/apples.md with two lines: Apples grow on ...",
    the heading lost, and it wrote just that."""
    lines = cfg.config.small.expect_lines
    parts = [f"{p}: " + ", ".join(line_text(x) for x in lines[p]) for p in paths if lines.get(p)]
    if parts:
        return ("Its file must hold these lines exactly, each on a line of its own "
                f"(small.expect_lines): {'; '.join(parts)}")
    words = words or {}
    said: dict[str, list[str]] = {}  # a passage -> the todo's files it is about
    for p in paths:
        if words.get(p):
            said.setdefault(words[p], []).append(p)
    return "\n".join(_said(ps, passage, [q for q in words
                                          if q not in ps and task_words.names(passage, q)])
                     for passage, ps in list(said.items())[:3])


def _said(paths: list[str], passage: str, others: list[str]) -> str:
    """The note of one passage; one that names other files of the task says they are not
    this todo's (with a passage about three notes under each note's todo, the 1.5B model
    wrote all three notes into each file)."""
    alone = (f" (it names {' and '.join(others)} too: those are other todos' files; this "
             f"todo writes {' and '.join(paths)} alone)") if others else ""
    return f"What the task says about {' and '.join(paths)}{alone}:\n{passage}"


def plan_example(cfg: ResolvedConfig, paths: list[str] | None = None) -> str:
    """A todo_write call that plans the config's deliverables (`paths`: those of them still
    short), one todo per file, for a refused plan's message ("" without expect_lines). The
    1.5B model, refused for copying the bootstrap's todos, copied them again: it copies
    what it is shown."""
    todos = deliverable_todos(cfg, sorted(cfg.config.small.expect_lines)
                              if paths is None else paths)
    if not todos:
        return ""
    return ("The files this job must deliver are listed in small.expect_lines; a plan "
            "of one todo per file not yet done, for example: todo_write(phase=\"Deliverables\","
            f" todos={json.dumps(todos, ensure_ascii=False)})")


def deliverable_todos(cfg: ResolvedConfig, paths: list[str]) -> list[dict[str, object]]:
    """One todo per file of `paths` that expect_lines lists lines for (at most 10): "Write
    <file> with these lines: ..."."""
    lines = cfg.config.small.expect_lines
    return [{"id": n, "content": f"Write {p} with these lines: " + " / ".join(
        x if isinstance(x, str) else x.describe for x in lines[p])}
        for n, p in enumerate([p for p in paths if lines.get(p)][:10], 1)]


def workflow_plan(cfg: ResolvedConfig, found: DeliverablesChecked) -> list[dict[str, object]]:
    """The small profile's plan after refused planning: one todo per declared deliverable
    `found` says is not there yet (at most 10) - "Write <file> with these lines: ..." for a
    file of expect_lines, "Write <file>" for any other, "Write the files matching <glob>" for
    a glob. (Told "Write notes/cats.md as instructions.md asks", the 1.5B model wrote
    instructions.md's text into each file.)"""
    lines = cfg.config.small.expect_lines
    short = not_there(found)[:10]
    return [{"id": n, "content": str(deliverable_todos(cfg, [p])[0]["content"]) if lines.get(p)
             else f"Write {'the files matching ' if set('*?[') & set(p) else ''}{p}"}
            for n, p in enumerate(short, 1)]


def not_there(found: DeliverablesChecked) -> list[str]:
    """The declared deliverables `found` says are not there yet."""
    return [p for p in found.declared if any(
        x.startswith(f"{p} ") or x == f"no file matches {p}" for x in found.problems)]


def plan_shown(todos: list[dict[str, object]]) -> str:
    """A todo_write of `todos` for a refusal to show ("" for none)."""
    return "" if not todos else ("A plan of one todo per file not there yet, for example: "
                                 f"todo_write(phase=\"Deliverables\", "
                                 f"todos={json.dumps(todos, ensure_ascii=False)})")


def task_plan(task: str, limit: int) -> list[dict[str, object]]:
    """The small profile's plan of a job that declares no deliverables, after refused
    planning: one todo per step of the task as `task` (instructions.md) states it - its
    paragraphs, and the items of its lists - headings aside, at most `limit` (and 10); in
    a later turn, the last follow-up instruction's. The task's own words: nothing is
    added that it does not ask for."""
    if layout.FOLLOW_UP_HEADING in task:
        task = task.rsplit(layout.FOLLOW_UP_HEADING, 1)[1].split("\n", 1)[-1]
    task = without_code(task)  # code is the task's material, not a step
    steps: list[str] = []
    for block in re.split(r"\n\s*\n", task):
        lines = [ln.strip() for ln in block.splitlines()
                 if ln.strip() and not ln.lstrip().startswith(("#", "[instructions.md is"))]
        items: list[tuple[bool, list[str]]] = []
        for line in lines:
            item = LIST_ITEM.match(line)
            if item or not items:
                items.append((bool(item), [item.group(1) if item else line]))
            else:
                items[-1][1].append(line)
        steps += [" ".join(words) for listed, words in items
                  if listed or len(" ".join(words).split()) >= 3]
    return [{"id": n, "content": s[:400]} for n, s in enumerate(steps[:limit], 1)]




def short_of(cfg: ResolvedConfig, problems: list[str]) -> list[str]:
    """The files of expect_lines that `problems` (a check's) says fall short, in order."""
    return [p for p in sorted(cfg.config.small.expect_lines)
            if any(x.startswith(f"{p} ") for x in problems)]


def plan_file_example(cfg: ResolvedConfig, path: str) -> str:
    """A write of main_plan.md that lists the config's deliverables, for a refusal that asks
    for the plan ("" for another file or without expect_lines). Refused for writing
    output/summary.md when main_plan.md was asked for, the 1.5B model wrote output/summary.md
    again, alternating with a refused todo_complete (eval round 10): both refusals now show
    the one call to make."""
    lines = cfg.config.small.expect_lines
    if path != layout.PLAN or not lines:
        return ""
    body = "# Plan\n" + "".join(
        f"- {p}: " + " / ".join(x if isinstance(x, str) else x.describe for x in lines[p]) + "\n"
        for p in sorted(lines)[:10]) + "Next: a tactical phase writes these files, one todo each.\n"
    return (f"write_file(path={json.dumps(path)}, "
            f"content={json.dumps(body, ensure_ascii=False)})")


def status_note(found: DeliverablesChecked) -> str:
    """What a transition or rewind phase's first message says of the declared deliverables
    ("" when the job declares none)."""
    if not found.declared:
        return ""
    if not found.problems:
        return ("\n\nEvery deliverable declared for this job is there ("
                f"{', '.join(found.delivered[:20])}). If nothing else is left to do, call "
                "job_complete now.")
    return ("\n\nThe deliverables are not all there yet: " + "; ".join(found.problems[:20])
            + ". The next todos are the work that makes them so.")


def fix_example(cfg: ResolvedConfig, problems: list[str]) -> str:
    """The small profile's part of a job_complete refusal: the write that mends the first
    file of expect_lines it names, else the write of the first deliverable that does not
    exist, to copy ("" when none is named). Under react the 1.5B model, told
    "notes/apples.md does not exist", rewrote output/summary.md and called job_complete
    again, three times (eval round 9); told "Do the work that makes them so with the tools",
    it read the three missing notes and called job_complete again, four times (an
    undeclared eval-files run)."""
    if not small_profile(cfg) or not cfg.config.tools.writes_files():
        return ""  # (no write to show a job that has no write_file)
    lines = cfg.config.small.expect_lines
    for path in sorted(lines):
        if lines[path] and any(p.startswith(f"{path} ") for p in problems):
            want = " and ".join(json.dumps(line, ensure_ascii=False) if isinstance(line, str)
                                else line_text(line) for line in lines[path])
            plural = "s" if len(lines[path]) > 1 else ""
            return (f" The first: write_file(path={json.dumps(path, ensure_ascii=False)}, "
                    f"content=...) with the line{plural} {want}, each on a line of its own, "
                    "and what instructions.md asks for.")
    missing = next((p.split(MISSING, 1)[0] for p in problems if MISSING in p), "")
    if not missing or " " in missing or workspace_folder_mended(cfg, missing):
        return ""  # (a write under workspace/ writes elsewhere: plan_calls)
    return (f" The first: write_file(path={json.dumps(missing, ensure_ascii=False)}, "
            "content=...) with what instructions.md asks for.")


MISSING = " does not exist"  # how check_files says a deliverable is not there


def mend_example(cfg: ResolvedConfig, found: LinesChecked) -> str:
    """How a todo's file that lacks lines is mended: the write of the first file `found`
    mended, to copy; else the lines each file must hold. Told only "Write the file again
    with exactly those lines", the 1.5B model wrote the same heading-less sentence again,
    5 to 10 times, in 6 of 10 runs (eval round 11)."""
    for path, text in sorted(found.mends.items()):
        return ("Write it again with every line it must hold, this call as it is: "
                f"write_file(path={json.dumps(path, ensure_ascii=False)}, "
                f"content={json.dumps(text, ensure_ascii=False)})")
    lines = cfg.config.small.expect_lines
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


