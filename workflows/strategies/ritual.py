"""The ritual's rules that keep a small model honest, for phase alternation.

Each answers a failure seen when a 1.5B model drove the phase machine (docs/local-models.md):

- `strategic_todos`: the predefined todos of a strategic phase, with the phase's numbers
  filled in (`{{min_todos}}`, `{{max_todos}}`, `{{archive}}`: the archive file of the phase
  before, so a rewind names the file to read) and the files each must change (`evidence`);
- `missing_evidence`: why a todo whose files did not change in the phase is not done;
- `named_files` / `missing_named`: the files a model's own todo names must exist before it is
  done (a 1.5B model completed "Write notes/apples.md ..." three times without writing);
- `limit_todo_completes`: at most N `todo_complete` calls take effect in one turn (a runaway
  turn of 31 calls completed whole todo lists without doing them);
- `job_complete_last`: a turn's `job_complete` runs after the turn's other calls and its
  `todo_complete`/`todo_rewind` do not run, so no earlier call can end the phase and skip it;
- `avoid_sets`: what a new plan must not repeat: the predefined strategic todos (copied back
  by the model as its tactical plan) and the todos earlier tactical phases completed;
- `completion_hint`: a turn wrote the file the current todo asks for but did not call
  todo_complete: the next call says so (a 1.5B model rewrote workspace.md three times);
- `written_for`: a turn that wrote every file the current todo must change or names completes
  it without todo_complete (with the hint alone, the same model rewrote workspace.md five
  times in a row until the repetition breaker tripped);
- `digest`: what the phase before did (its todos with their notes, the files it wrote), in
  the next strategic phase's first message: the model no longer has to read the archive (the
  1.5B model read archive/phase_2.yaml over and over and never went on);
- `Loops`: tactical phases in a row that changed no file and called no tool of the task
  (patch `work-without-files`), or too many rewinds: the job stops as `stuck` with the
  reason (`phase_settings.max_idle_phases`, `max_rewinds`).

Pure functions of the strategy's state; `PLANNING_FILES` do not count as work done.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from workflows import task_files
from workflows.contract import CONTROL_TOOLS, ResolvedConfig, Todo, TodoSet, ToolOutcome, layout
from workflows.contract.config import PhaseSettings, StrategicTodos
from workflows.contract.plans import repeated_plan
from workflows.prompts import render
from workflows.strategies.base import PlannedCall
from workflows.todos import current_index

PLANNING_FILES = layout.MEMORY_FILES
MAX_CHANGED = 200  # paths a phase remembers as written (for `written_for`)
VARIANTS = ("bootstrap", "transition", "rewind", "wrap_up")


def small_profile(cfg: ResolvedConfig) -> bool:
    """Does the job take the small model profile's rules (llm.profile: small)?"""
    return cfg.config.llm.profile == "small"


def strategic_todos(predefined: StrategicTodos, variant: str, values: dict[str, str]
                    ) -> tuple[list[Todo], dict[int, list[str]]]:
    """(the phase's predefined todos from `predefined` (a config's strategic_todos, or a
    nested job's), todo id -> the files it must change)."""
    todos: list[Todo] = []
    evidence: dict[int, list[str]] = {}
    for i, item in enumerate(getattr(predefined, variant), 1):
        content = item if isinstance(item, str) else item.content
        todos.append(Todo(id=i, content=render(content, values)))
        if not isinstance(item, str) and item.evidence:
            evidence[i] = list(item.evidence)
    return todos, evidence


def no_example(*_: str) -> str:
    """No write or plan to copy (the default path: the small profile shows one)."""
    return ""


def missing_evidence(todo: Todo, states: dict[str, str] | None,
                     example: Callable[[str], str] = no_example,
                     written: Sequence[str] = ()) -> str | None:
    """Why `todo` is not done yet (its files missing or unchanged), or None; `example(path)`:
    a write of the first such file to copy; `written`: the files the phase wrote (one of
    the same name elsewhere is named: a model that wrote workspace/report.md for report.md
    is told where its file went)."""
    if not states:
        return None
    missing = [p for p, s in states.items() if s == "missing"]
    same = [p for p, s in states.items() if s == "unchanged"]
    if not missing and not same:
        return None
    verb = "do" if len(missing) > 1 else "does"
    what = "; ".join(
        ([f"{', '.join(missing)} {verb} not exist{elsewhere(missing, written)}"] if missing
         else [])
        + ([f"{', '.join(same)} has not changed since this phase began"] if same else []))
    first = (missing + same)[0]
    shown = example(first)
    return (f"Todo {todo.id} is not done: {what}. Do it first (write_file {first} with what "
            "the todo asks for" + (f", for example: {shown}" if shown else "") + "), then call "
            "todo_complete.")


_WRITE = re.compile(r"\s*(?:write|create|rewrite|update|save)\s+(?:the\s+|a\s+)?(?:file\s+)?"
                    r"[`'\"]?([\w./-]+)[`'\"]?(?=[\s:,.;]|$)", re.IGNORECASE)


def written_file(todo: Todo) -> list[str]:
    """The files a todo says to write - only when it begins so: "Write notes/a.md with ...",
    "Create the file `out.txt`: ..." (that file), or "Write three notes: `a.md`, `b.md` and
    `c.md`. ..." (a first sentence that ends in a list of quoted paths after its colon: the
    1.5B model copied such a sentence of the task as its todo and called todo_complete with
    nothing written) - as
    paths in the job's own folder that are not the workflow's or the job's inputs; [] for
    any other todo (a read, a check, a todo that merely mentions a file). The small profile
    holds such a todo to its files."""
    m = _WRITE.match(todo.content)
    path = m.group(1).rstrip(".") if m else ""
    if _own(path):
        return [path]
    if not _WRITE_VERB.match(todo.content):
        return []
    first = _SENTENCE_END.split(todo.content, maxsplit=1)[0]
    listed = first.split(":", 1)[1].strip().rstrip(".") if ":" in first else ""
    if not _QUOTED_LIST.fullmatch(listed):  # only "...: `a`, `b` and `c`." - no read, no check
        return []
    return list(dict.fromkeys(p for p in _QUOTED_PATH.findall(listed) if _own(p)))


_WRITE_VERB = re.compile(r"\s*(?:write|create|save)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_QUOTED_PATH = re.compile(r"`([\w./-]+\.[A-Za-z0-9]{1,5})`")
_QUOTED_LIST = re.compile(r"`[^`]+`(?:\s*(?:,\s*and|,|and)\s*`[^`]+`)*")


def _own(path: str) -> bool:
    """A file of the job's own folder that a todo may say to write."""
    return bool(path) and layout.is_workspace_path(path, max_len=200) and "." in path \
        and not layout.is_workflow_owned(path) and not path.startswith(f"{layout.DOCUMENTS}/")


def missing_named(todo: Todo, states: dict[str, str] | None,
                  written: Sequence[str] = ()) -> str | None:
    """Why `todo` is not done yet (a file it names does not exist; unchanged is fine), or
    None."""
    return missing_evidence(todo, {p: s for p, s in (states or {}).items() if s == "missing"},
                            written=written)


def elsewhere(missing: Sequence[str], written: Sequence[str]) -> str:
    """' (... was written instead)' when files of the same name as `missing` were written at
    other paths, or when a file was written at the path of their folder; '' else. Exact
    names only: nothing is guessed from a todo's words."""
    other = list(dict.fromkeys(p for m in missing for p in layout.named_alike(m, written)
                               if p not in missing))
    folders = {p: [m for m in missing if m.startswith(f"{p.rstrip('/')}/")] for p in written}
    folders = {p: inside for p, inside in folders.items() if inside}
    if folders:  # the 1.5B model wrote all three notes into one file named `notes`
        return " (" + "; ".join(
            f"{p} was written as one file: it is the folder of {', '.join(inside[:3])}"
            for p, inside in list(folders.items())[:3]) + "; write each file at its own path)"
    if not other:
        return ""
    return (f" ({', '.join(other[:3])} was written instead: the file must be at the path "
            "named, exactly)")


def completion_hint(todos: list[Todo], evidence: dict[int, list[str]],
                    outcomes: list[ToolOutcome], completed: bool, small: bool) -> list[str]:
    """A reminder when this turn wrote the file(s) the current todo asks for (its evidence,
    or, with the small profile, the file it says to write) and completed no todo; [] else."""
    cur = current_index(todos)
    if cur is None or completed:
        return []
    todo = todos[cur]
    changed = {p for o in outcomes if o.ok for p in o.changed}
    wanted = set(evidence.get(todo.id) or (written_file(todo) if small else []))
    hit = changed & wanted
    if not hit or (evidence.get(todo.id) and hit != wanted):
        return []
    return [f"{', '.join(sorted(hit))} written: that is what task {todo.id} asks for. If task "
            f"{todo.id} is done, call todo_complete() now; if not, finish it first."]


def written_for(todo: Todo, evidence: list[str] | None, kind: str, turn: set[str],
                phase: set[str]) -> list[str]:
    """The files whose writing completes `todo`: its evidence (a predefined todo), or (the
    small profile's `kind` "tactical") the file a tactical todo says to write, when this
    turn wrote one of them and the phase all of them; [] when the model must call
    todo_complete itself."""
    wanted = set(evidence or (written_file(todo) if kind == "tactical" else []))
    if not wanted or not wanted & turn or not wanted <= phase | turn:
        return []
    return sorted(wanted)


def limit_todo_completes(planned: list[PlannedCall], per_turn: int) -> list[PlannedCall]:
    """The turn with every todo_complete after the first `per_turn` refused (0: no limit)."""
    if per_turn <= 0:
        return planned
    out, seen = [], 0
    for p in planned:
        if p.refusal is None and p.call.name == "todo_complete":
            seen += 1
            if seen > per_turn:
                p = PlannedCall(p.call, f"only {per_turn} todo_complete takes effect per turn; "
                                "this one was not run. Do the work of the current todo first, "
                                "then call todo_complete again", "one_todo_per_turn")
        out.append(p)
    return out


TODO_NEEDS_A_CALL = "todo-needs-a-call"  # the patch: refuse_workless_complete


def work_calls(planned: list[PlannedCall]) -> int:
    """The turn's calls that run and are not control calls (a todo's work, tried)."""
    return sum(p.refusal is None and p.call.name not in CONTROL_TOOLS for p in planned)


def refuse_workless_complete(planned: list[PlannedCall], todo: Todo | None, calls: int,
                             warned: list[int]) -> list[PlannedCall] | None:
    """Small profile: the turn with its todo_complete refused when no tool call was made for
    `todo` (the current one, when no file check holds it: `calls` before this turn, and
    none before it in the turn), once per todo (`warned`, updated); None when nothing is
    refused. In BFCL under phase_alternation
    the 1.5B model completed the workflow's one todo ("show me the list of files in tmp
    ...") with notes of work it never did, in the first answer of each tactical phase."""
    if todo is None or todo.id in warned:
        return None
    done = calls

    def why(p: PlannedCall) -> str | None:  # (called in order, for calls not refused)
        nonlocal done
        if p.call.name == "todo_complete" and not done:
            return (f"Todo {todo.id} is not done: no tool call was made for it. Do what it "
                    "asks with the task's tools, then call todo_complete with what they "
                    "returned; if it needs no tool at all, call todo_complete again.")
        done += p.call.name not in CONTROL_TOOLS
        return None

    out = refuse_where(planned, why, "todo_not_done")
    if out is not None:
        warned.append(todo.id)
    return out


def refuse_where(planned: list[PlannedCall], why: Callable[[PlannedCall], str | None],
                 code: str) -> list[PlannedCall] | None:
    """The turn with each call not refused yet that `why` gives a reason for refused with it
    (`code`), or None when `why` gives none."""
    out, changed = [], False
    for p in planned:
        reason = why(p) if p.refusal is None else None
        if reason is not None:
            p, changed = PlannedCall(p.call, reason, code), True
        out.append(p)
    return out if changed else None


def refuse_repeated_plans(planned: list[PlannedCall], avoid: tuple[TodoSet, ...],
                          example: Callable[[], str] = no_example) -> list[PlannedCall] | None:
    """The turn with each todo_write whose todos repeat one of `avoid` (the predefined todos,
    done work) refused with the gate's reason, or None when none does. The gate refuses such
    a todos.yaml anyway, but only at todo_complete: a 1.5B model wrote the bootstrap's own
    todos with todo_write again and again and never got there. `example()`: a plan to copy,
    built only for a refusal (completion_gate.plan_example: this model copies what it is
    shown)."""
    def why(p: PlannedCall) -> str | None:
        todos = (p.call.args or {}).get("todos") if p.call.name == "todo_write" else None
        texts = [str(t.get("content", "")) for t in todos if isinstance(t, dict)] \
            if isinstance(todos, list) else []
        repeats = repeated_plan(texts, avoid) if texts else None
        if repeats is None:
            return None
        shown = example()
        return f"todos.yaml was not written: {repeats}" + (f" {shown}" if shown else "")

    return refuse_where(planned, why, "plan_repeats")


def written_path(p: PlannedCall) -> str:
    """The workspace path a well-formed write_file call writes ("" for any other call).
    write_file's arguments stay in the activity; its summary is the path (calls.py), unless
    the workflow mended it (`PlannedCall.path`)."""
    if p.call.name != "write_file" or p.call.error:
        return ""
    return "/".join(s for s in (p.path or p.call.summary).strip().split("/")
                    if s not in ("", "."))


def refuse_todos_file_writes(planned: list[PlannedCall], example: Callable[[], str]
                              ) -> list[PlannedCall] | None:
    """The turn with each write_file of todos.yaml refused (todo_write writes it, checked),
    or None when the turn has none. `example()`: a todo_write to copy. Eval round 13: the
    1.5B model, in a rewind phase, wrote prose into todos.yaml with write_file six times;
    the gate took none of it, and nothing refused the writes, so no limit counted them."""
    def why(p: PlannedCall) -> str | None:
        if written_path(p) != layout.TODOS:
            return None
        shown = example()
        return ("todos.yaml was not written: only todo_write writes it (the workflow checks "
                "the plan and accepts no other todos.yaml). Call todo_write(phase=..., "
                "todos=[{\"id\": 1, \"content\": ...}, ...]) instead"
                + (f". {shown}" if shown else "."))

    return refuse_where(planned, why, "todos_by_todo_write")


def writes_none(todos: object, paths: list[str]) -> bool:
    """Do `todos` (a todo_write's argument) say to write none of `paths` (a path or its file
    name, in any case; for a glob, a path it matches)? A todo writes the files it names as
    the thing to write (written_file, task_files.named), not the ones it mentions: the 1.5B
    model planned the transition's own words, "notes/cats.md does not exist; ... The next
    todos are the work that makes them so", as its todo, and marked it done, three phases in
    a row. False when there are no todos to look at."""
    texts = [str(t.get("content", ""))[:2000] for t in todos if isinstance(t, dict)][:50] \
        if isinstance(todos, list) else []
    names = {n for p in paths if not _GLOB.search(p)
             for n in (p.lower(), p.lower().rsplit("/", 1)[-1])}
    globs = [p.lower() for p in paths if _GLOB.search(p)]

    def one_of(w: str) -> bool:
        w = w.lower().strip("`'\".,;:()[]")
        return w in names or w.rsplit("/", 1)[-1] in names or any(
            fnmatch.fnmatchcase(w, g) for g in globs)

    return bool(texts) and not any(
        one_of(w) for t in texts
        for w in (*written_file(Todo(id=1, content=t)), *task_files.named(t),
                  *(w for m in _CHANGES.finditer(t) for w in m.group(1).split())))


# a todo that writes or changes a file it names after the verb, in the same sentence:
# "Write a note about cats in notes/cats.md", "Append the summary to `notes/cats.md`"
# (not "notes/cats.md does not exist; ... otherwise write the next phase's todos")
_CHANGES = re.compile(r"\b(?:write|create|save|produce|generate|make|append|add|fill\s+in|"
                      r"edit|update|complete|extend|rewrite|fix)\b([^;!?]*?)(?=[;!?]|\.\s|$)",
                      re.I)


_GLOB = re.compile(r"[*?\[]")


def writes_work(todos: object) -> bool:
    """Does a todo of `todos` say to write a file of the work (not a planning file)? A plan
    may reach a deliverable through another file ("Write data.csv with the figures")."""
    return isinstance(todos, list) and any(
        p not in PLANNING_FILES for t in todos if isinstance(t, dict)
        for p in written_file(Todo(id=1, content=str(t.get("content", ""))[:2000])))


def plans(planned: list[PlannedCall]) -> bool:
    """Does the turn hold a todo_write that is not refused?"""
    return any(p.refusal is None and p.call.name == "todo_write" for p in planned)


def refuse_off_task_plans(planned: list[PlannedCall], short: list[str], example: str
                          ) -> list[PlannedCall] | None:
    """The turn with each todo_write whose todos name none of `short` (the deliverables
    not yet as the task asks) refused, showing `example` (a plan of them), or None. Eval
    rounds 11 and 13: the 1.5B model's bootstrap planned twenty todos such as "Read the
    workspace and explore its contents"; the tactical phase then read_file'd 'workspace'
    until the loop breaker stopped it, and no deliverable was ever planned."""
    def why(p: PlannedCall) -> str | None:
        todos = (p.call.args or {}).get("todos")
        if p.call.name != "todo_write" or not writes_none(todos, short) or writes_work(todos):
            return None
        return (f"todos.yaml was not written: no todo writes a file the task must still "
                f"deliver ({', '.join(short)}); a plan's todos are the task's concrete steps, "
                f"one per file to write. {example}").strip()

    return refuse_where(planned, why, "plan_off_task") if short else None


def refuse_off_todo_writes(planned: list[PlannedCall], todo: Todo | None,
                           evidence: list[str] | None, done: frozenset[str] = frozenset(),
                           example: Callable[[str], str] = no_example
                           ) -> list[PlannedCall] | None:
    """The turn with each write_file of a file other than the planning files refused, while
    the current todo is a predefined one that must change `evidence` (workspace.md,
    main_plan.md); and of a planning file in `done` (the files of the phase's todos done
    already, that no todo still to come changes) in a turn
    that does not write `evidence` too. None when no call is refused. `example(path)`: a
    write of `path` to copy, for the refusal.

    Asked for main_plan.md ("the deliverables the task asks for"), the 1.5B model wrote
    output/summary.md instead, ten times and more in a row (eval rounds 4, 6, 7 and 9): a
    strategic phase plans, a tactical phase writes the task's files. In a rewind phase it
    rewrote workspace.md (its first todo, done) five times when asked for main_plan.md
    (round 10)."""
    if todo is None or not evidence:
        return None

    def written(p: PlannedCall) -> str:
        return "" if p.refusal is not None else written_path(p)

    if any(written(p) in evidence for p in planned):
        done = frozenset()  # the todo's own file is written: the memory may change beside it

    def why(p: PlannedCall) -> str | None:
        name = written(p)
        if not name or (name in PLANNING_FILES and name not in done):
            return None
        shown = example(evidence[0])
        because = (f"{name} was done by an earlier task of this phase" if name in PLANNING_FILES
                   else "a strategic phase writes only its plan and memory (the task's files "
                   "are written by a tactical phase, from the todos of todo_write)")
        return (f"{name} was not written: task {todo.id} asks for {' and '.join(evidence)}, "
                f"and {because}. Call write_file with path {evidence[0]} now, with what task "
                f"{todo.id} asks for" + (f", for example: {shown}" if shown else "."))

    return refuse_where(planned, why, "not_this_todo")


def done_planning_files(todos: list[Todo], evidence: dict[int, list[str]]) -> frozenset[str]:
    """The files of the todos before the current one that no todo from the current one on
    must change (what `refuse_off_todo_writes` refuses as a rewrite)."""
    cur = current_index(todos)
    if cur is None:
        return frozenset()
    later = {p for t in todos[cur:] for p in evidence.get(t.id) or []}
    return frozenset(p for t in todos[:cur] for p in evidence.get(t.id) or []
                     if p not in later)


def job_complete_last(planned: list[PlannedCall]) -> list[PlannedCall] | None:
    """The turn with its first job_complete moved to the end and the calls that could end
    the phase before it refused; None when that changes nothing."""
    runnable = [i for i, p in enumerate(planned) if p.refusal is None]
    jc = [i for i in runnable if planned[i].call.name == "job_complete"]
    if not jc:
        return None
    first = jc[0]
    enders = [i for i in runnable if i != first and planned[i].call.name in (
        "todo_complete", "todo_rewind", "job_complete")]
    if not enders and first == len(planned) - 1:
        return None
    out = []
    for i, p in enumerate(planned):
        if i == first:
            continue
        if i in enders:
            p = PlannedCall(p.call, "not run: this turn calls job_complete, which ends the job",
                            "job_completing")
        out.append(p)
    return out + [planned[first]]


def avoid_sets(cfg: ResolvedConfig, done: list[list[str]], prompt: str = "",
               predefined: StrategicTodos | None = None) -> tuple[TodoSet, ...]:
    """The predefined todos and the completed todos of earlier tactical phases. With
    `prompt`, the name of the strategic phases' system prompt (patch plan-not-the-prompt):
    the predefined todos the strategy uses (`predefined`, else the config's) as written and
    as the model reads them (`{{min_todos}}`-`{{max_todos}}` filled in) and that prompt's
    own bullets (`prompt_bullets`), exact copies, a todo's list marker aside: the 1.5B model
    planned the strategic prompt's five bullets, numbered, as a tactical phase's todos (three
    BFCL cases of ten under phase_alternation, docs/benchmarks.md)."""
    small = small_profile(cfg)
    ps = cfg.config.phase_settings
    values = {"min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos)}
    todo_sets = predefined or cfg.strategic_todos

    def texts(v: str) -> list[str]:
        raw = [t if isinstance(t, str) else t.content for t in getattr(todo_sets, v)]
        return raw + [r for t in raw if (r := render(t, values)) != t] if prompt else raw

    sets = [TodoSet(label=f"the predefined {v.replace('_', '-')} todos of a strategic phase",
                    todos=texts(v), similar=small, unnumbered=bool(prompt))
            for v in VARIANTS]
    if prompt and cfg.prompts.get(prompt):
        sets.append(TodoSet(label="the strategic phase's own instructions (its system prompt)",
                            todos=prompt_bullets(cfg.prompts[prompt], values), unnumbered=True))
    sets += [TodoSet(label=f"todos an earlier phase completed ({n + 1} of the last "
                     f"{len(done)} tactical phases)", todos=todos, similar=small)
             for n, todos in enumerate(done) if todos]
    return tuple(sets)


PLAN_NOT_THE_PROMPT = "plan-not-the-prompt"  # the patch: avoid_sets(prompt=...)


def prompt_bullets(template: str, values: dict[str, str]) -> list[str]:
    """The `- ` bullets of a prompt template (its `{{slots}}` from `values`), each as its
    first line and as a whole (its indented lines joined): what the prompt tells the model
    to do, never a step of the task. Bullets of a filled-in slot (the task's own text) are
    not the template's, so they are not here."""
    bullets: list[list[str]] = []
    for line in template.splitlines():
        text = line.strip()
        if line.startswith("- "):
            bullets.append([text[2:].strip()])
        elif bullets and bullets[-1] and text and line[:1].isspace():
            bullets[-1].append(text)
        elif bullets and bullets[-1]:
            bullets.append([])  # the bullet ended: no later line continues it
    out: list[str] = []
    for b in bullets:
        if b:
            first, whole = render(b[0], values), render(" ".join(b), values)
            out += [first] + ([whole] if whole != first else [])
    return out


def digest(number: int, status: str, todos: list[Todo], changed: list[str],
           limit: int = 3000) -> str:
    """The phase's todos (done or not, with their notes) and the files it wrote, at most
    `limit` characters, for the first message of the phase after it."""
    marks = {"completed": "x", "pending": " ", "cancelled": "-"}
    lines = [f"What phase {number} did ({status}):"]
    for t in todos:
        note = " ".join(t.notes.split())[:200]
        lines.append(f"- [{marks.get(t.status, ' ')}] {t.id}. {t.content}"
                     + (f" - {note}" if note else ""))
    files = [p for p in changed if p not in PLANNING_FILES]
    lines.append(f"Files it wrote: {', '.join(files[:30]) or 'none'}"
                 + (f" and {len(files) - 30} more" if len(files) > 30 else "") + ".")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + " [...]"


# a tactical call of a tool of the task that wrote no file is work: not an idle phase
WORK_WITHOUT_FILES = "work-without-files"
PLAN_BY_WORKFLOW = "plan-by-workflow"  # Versioned: refused planning ends in the workflow's plan
REFUSALS = frozenset({  # the ritual's refusals (job_complete's own: max_refusals)
    "plan_repeats", "not_this_todo", "transition_rejected", "todo_not_done", "plan_off_task",
    "todos_by_todo_write"})


class Loops(BaseModel):
    """What the ritual remembers across phases (carried by continue-as-new)."""

    done_plans: list[list[str]] = []  # completed todos of the last 10 tactical phases
    # tactical phases in a row that changed no file besides the plan and called no tool of
    # the task
    idle_phases: int = 0
    rewinds: int = 0  # rewind phases started
    refusals: int = 0  # job_complete calls the completion gate refused

    def archived(self, completed: list[str]) -> None:
        """A tactical phase ended with these todos completed."""
        self.done_plans = (self.done_plans + [completed])[-10:]

    def moving_on(self, kind: str, writes: int, next_variant: str) -> None:
        """A phase of `kind` that changed `writes` files ends; a `next_variant` one starts."""
        if kind == "tactical":
            self.idle_phases = 0 if writes else self.idle_phases + 1
        self.rewinds += next_variant == "rewind"

    def stop_reason(self, b: PhaseSettings) -> str | None:
        """Why the job stops as stuck (idle phases, too many rewinds), or None."""
        if b.max_idle_phases and self.idle_phases >= b.max_idle_phases:
            return (f"{self.idle_phases} tactical phases in a row changed no file besides the "
                    f"plan and called no tool of the task (phase_settings.max_idle_phases="
                    f"{b.max_idle_phases}): the job loops without doing work")
        if b.max_rewinds and self.rewinds > b.max_rewinds:
            return (f"the job was rewound {self.rewinds} times (phase_settings.max_rewinds="
                    f"{b.max_rewinds}) without finishing")
        return None
