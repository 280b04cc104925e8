"""The ritual's rules for phase alternation: what makes a phase's todo done, what a plan must
not repeat, and when the loop of phases stops.

- `strategic_todos`: the predefined todos of a strategic phase, with the phase's numbers
  filled in (`{{min_todos}}`, `{{max_todos}}`, `{{archive}}`: the archive file of the phase
  before, so a rewind names the file to read) and the files each must change (`evidence`);
- `missing_evidence`: why a todo whose files did not change in the phase is not done;
- `written_for` / `completion_hint`: a turn that wrote every file a predefined todo must
  change completes it (the model is told); one that wrote some is reminded to finish it;
- guards (workflows/guards.py) of a strategic phase: `not_this_todo` - while its current
  todo must change its memory files, a strategic phase writes only those (the task's files
  are a tactical phase's work); `plan_repeats` - a todo_write that repeats the predefined
  todos, the strategic prompt's own bullets or the todos done phases completed;
- `digest`: what the phase before did (its todos with their notes, the files it wrote), in
  the next strategic phase's first message;
- `Loops`: tactical phases in a row that did no work (no file of the work written, no tool
  of the task called), or too many rewinds: the job stops as `stuck` with the reason
  (`phase_settings.max_idle_phases`, `max_rewinds`).

Pure functions of the strategy's state; `PLANNING_FILES` do not count as work done.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from switchback.workflows.completion import DeliverablesChecked
from switchback.workflows.contract import (
    ResolvedConfig,
    Todo,
    TodoSet,
    ToolCallInfo,
    ToolOutcome,
    layout,
)
from switchback.workflows.contract.config import PhaseSettings, StrategicTodos
from switchback.workflows.contract.plans import repeated_plan
from switchback.workflows.guards import CallGuard, Turn
from switchback.workflows.prompts import render
from switchback.workflows.todos import current_index

PLANNING_FILES = layout.MEMORY_FILES
MAX_CHANGED = 200  # paths a phase remembers as written (for `written_for`)
VARIANTS = ("bootstrap", "transition", "rewind", "wrap_up")
REFUSALS = frozenset({  # the ritual's refusals, counted per phase
    "plan_repeats", "not_this_todo", "transition_rejected", "todo_not_done"})


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


def missing_evidence(todo: Todo, states: dict[str, str] | None,
                     written: Sequence[str] = ()) -> str | None:
    """Why `todo` is not done yet (its files missing or unchanged), or None; `written`: the
    files the phase wrote (one of the same name elsewhere is named, so the model learns
    where its file went)."""
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
    return (f"Todo {todo.id} is not done: {what}. Do it first (write_file {first} with what "
            "the todo asks for), then call todo_complete.")


def elsewhere(missing: Sequence[str], written: Sequence[str]) -> str:
    """' (... was written instead)' when files of the same name as `missing` were written at
    other paths, or when a file was written at the path of their folder; '' else. Exact
    names only: nothing is guessed from a todo's words."""
    other = list(dict.fromkeys(p for m in missing for p in layout.named_alike(m, written)
                               if p not in missing))
    folders = {p: [m for m in missing if m.startswith(f"{p.rstrip('/')}/")] for p in written}
    folders = {p: inside for p, inside in folders.items() if inside}
    if folders:
        return " (" + "; ".join(
            f"{p} was written as one file: it is the folder of {', '.join(inside[:3])}"
            for p, inside in list(folders.items())[:3]) + "; write each file at its own path)"
    if not other:
        return ""
    return (f" ({', '.join(other[:3])} was written instead: the file must be at the path "
            "named, exactly)")


def completion_hint(todos: list[Todo], evidence: dict[int, list[str]],
                    outcomes: list[ToolOutcome], completed: bool) -> list[str]:
    """A reminder when this turn wrote files the current todo must change but did not
    complete it; [] else."""
    cur = current_index(todos)
    if cur is None or completed:
        return []
    todo = todos[cur]
    changed = {p for o in outcomes if o.ok for p in o.changed}
    wanted = set(evidence.get(todo.id) or [])
    hit = changed & wanted
    if not hit or hit != wanted:
        return []
    return [f"{', '.join(sorted(hit))} written: that is what task {todo.id} asks for. If task "
            f"{todo.id} is done, call todo_complete() now; if not, finish it first."]


def written_for(evidence: list[str] | None, turn: set[str], phase: set[str]) -> list[str]:
    """The files whose writing completes a predefined todo (its `evidence`), when this turn
    wrote one of them and the phase all of them; [] when the model must call todo_complete
    itself."""
    wanted = set(evidence or [])
    if not wanted or not wanted & turn or not wanted <= phase | turn:
        return []
    return sorted(wanted)


def written_path(call: ToolCallInfo) -> str:
    """The workspace path a well-formed write_file call writes ("" for any other call):
    write_file's arguments stay in the activity, its summary is the path (calls.py)."""
    if call.name != "write_file" or call.error:
        return ""
    return "/".join(s for s in call.summary.strip().split("/") if s not in ("", "."))


def not_this_todo(todo: Todo | None, evidence: list[str] | None,
                  done: frozenset[str] = frozenset()) -> CallGuard:
    """The guard of a strategic phase whose current todo must change `evidence` (its memory
    files): a write_file of any other file is refused, and of a planning file in `done` (a
    todo done before, that no todo still to come changes) in a turn that does not write
    `evidence` too. A strategic phase plans; a tactical phase writes the task's files."""
    def guard(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
        name = written_path(call)
        if todo is None or not evidence or not name:
            return None
        writes_own = any(written_path(c) in evidence for c in turn.calls)
        if name in PLANNING_FILES and (name not in done or writes_own):
            return None
        because = (f"{name} was done by an earlier task of this phase" if name in PLANNING_FILES
                   else "a strategic phase writes only its plan and memory (the task's files "
                   "are written by a tactical phase, from the todos of todo_write)")
        return "not_this_todo", (
            f"{name} was not written: task {todo.id} asks for {' and '.join(evidence)}, and "
            f"{because}. Call write_file with path {evidence[0]} now, with what task "
            f"{todo.id} asks for.")
    return guard


def plan_repeats(avoid: tuple[TodoSet, ...]) -> CallGuard:
    """The guard on todo_write: a plan that repeats one of `avoid` is refused with the gate's
    reason (the gate refuses it too, but only at the phase's last todo_complete)."""
    def guard(call: ToolCallInfo, turn: Turn) -> tuple[str, str] | None:
        todos = (call.args or {}).get("todos") if call.name == "todo_write" else None
        texts = [str(t.get("content", "")) for t in todos if isinstance(t, dict)] \
            if isinstance(todos, list) else []
        repeats = repeated_plan(texts, avoid) if texts else None
        if repeats is None:
            return None
        return "plan_repeats", f"todos.yaml was not written: {repeats}"
    return guard


def strategic_guards(todos: list[Todo], evidence: dict[int, list[str]],
                     avoid: tuple[TodoSet, ...]) -> list[CallGuard]:
    """A strategic phase's own guards: `not_this_todo` for its current todo, `plan_repeats`."""
    cur = current_index(todos)
    todo = None if cur is None else todos[cur]
    return [not_this_todo(todo, None if todo is None else evidence.get(todo.id),
                          done_planning_files(todos, evidence)), plan_repeats(avoid)]


def done_planning_files(todos: list[Todo], evidence: dict[int, list[str]]) -> frozenset[str]:
    """The files of the todos before the current one that no todo from the current one on
    must change (what `not_this_todo` refuses as a rewrite)."""
    cur = current_index(todos)
    if cur is None:
        return frozenset()
    later = {p for t in todos[cur:] for p in evidence.get(t.id) or []}
    return frozenset(p for t in todos[:cur] for p in evidence.get(t.id) or []
                     if p not in later)


def avoid_sets(cfg: ResolvedConfig, done: list[list[str]], prompt: str,
               predefined: StrategicTodos | None = None) -> tuple[TodoSet, ...]:
    """What a new plan must not repeat: the predefined todos (`predefined`, else the
    config's) as written and as the model reads them (numbers filled in), the bullets of
    the strategic phases' system prompt (`prompt`: its name), a todo's list marker aside,
    and the completed todos of earlier tactical phases (`done`)."""
    ps = cfg.config.phase_settings
    values = {"min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos)}
    todo_sets = predefined or cfg.strategic_todos

    def texts(v: str) -> list[str]:
        raw = [t if isinstance(t, str) else t.content for t in getattr(todo_sets, v)]
        return raw + [r for t in raw if (r := render(t, values)) != t]

    sets = [TodoSet(label=f"the predefined {v.replace('_', '-')} todos of a strategic phase",
                    todos=texts(v), unnumbered=True) for v in VARIANTS]
    if cfg.prompts.get(prompt):
        sets.append(TodoSet(label="the strategic phase's own instructions (its system prompt)",
                            todos=prompt_bullets(cfg.prompts[prompt], values), unnumbered=True))
    sets += [TodoSet(label=f"todos an earlier phase completed ({n + 1} of the last "
                     f"{len(done)} tactical phases)", todos=todos)
             for n, todos in enumerate(done) if todos]
    return tuple(sets)


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


def status_note(found: DeliverablesChecked) -> str:
    """What a transition or rewind phase's first message says of the deliverables the job is
    held to ("" when there are none)."""
    if not found.declared:
        return ""
    if not found.problems:
        return ("\n\nEvery deliverable declared for this job is there ("
                f"{', '.join(found.delivered[:20])}). If nothing else is left to do, call "
                "job_complete now.")
    return ("\n\nThe deliverables are not all there yet: " + "; ".join(found.problems[:20])
            + ". The next todos are the work that makes them so.")


class Loops(BaseModel):
    """What the ritual remembers across phases (carried by continue-as-new)."""

    done_plans: list[list[str]] = []  # completed todos of the last 10 tactical phases
    # tactical phases in a row that changed no file besides the plan and called no tool of
    # the task
    idle_phases: int = 0
    rewinds: int = 0  # rewind phases started
    refusals: int = 0  # job_complete calls the completion service refused

    def archived(self, completed: list[str]) -> None:
        """A tactical phase ended with these todos completed."""
        self.done_plans = (self.done_plans + [completed])[-10:]

    def moving_on(self, kind: str, work: int, next_variant: str) -> None:
        """A phase of `kind` that did `work` (files written, calls of the task's tools) ends;
        a `next_variant` one starts."""
        if kind == "tactical":
            self.idle_phases = 0 if work else self.idle_phases + 1
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
