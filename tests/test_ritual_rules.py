"""The ritual's rules on their own (pure): the gate's staleness and repeat checks, the
strategic phase's guards, the predefined todos' evidence, loops across phases."""

from __future__ import annotations

from switchback.activities.config_files import load_config
from switchback.activities.storage.todos_file import digest, stale_problem
from switchback.workflows import guards
from switchback.workflows.contract import Todo, TodoSet, ToolCallInfo, ToolOutcome
from switchback.workflows.contract.config import PhaseSettings
from switchback.workflows.contract.plans import repeated_plan
from switchback.workflows.strategies import ritual
from tests.scripts import PROMPT_COPY


def specs(*contents: str) -> list[str]:
    return list(contents)


def screen(calls: list[ToolCallInfo], *own: guards.CallGuard,
           offered: tuple[str, ...] = ("write_file", "todo_write", "read_file", "todo_complete",
                                       "job_complete")) -> list[guards.PlannedCall]:
    return guards.screen(calls, list(offered), "strategic", load_config("defaults",
                                                                         policy=False), own)


def test_a_todos_yaml_is_this_phases_only_if_its_todo_write_wrote_it():
    text = "phase: P\ntodos:\n- id: 1\n  content: x\n"
    ok = {"conversation": "phase_0003", "sha256": digest(text)}
    assert stale_problem(ok, "phase_0003", text) is None
    assert "left over from phase 1 (todo_write wrote it then)" in stale_problem(
        {**ok, "conversation": "phase_0001"}, "phase_0003", text)
    assert "changed after todo_write wrote it (by write_file?)" in stale_problem(
        ok, "phase_0003", text + "- id: 2\n  content: y\n")
    assert "not written by todo_write" in stale_problem(None, "phase_0003", text)


def test_a_plan_that_repeats_the_predefined_todos_or_done_work_is_refused():
    """A repeat is the same text (words, case and a list marker aside)."""
    cfg = load_config("defaults", policy=False)
    boot = [t if isinstance(t, str) else t.content for t in cfg.strategic_todos.bootstrap]
    avoid = list(ritual.avoid_sets(cfg, [], "strategic"))
    copied = specs(boot[0], boot[1].replace("main_plan.md", "the plan file"), "Write notes/a.md",
                   "Write notes/b.md")
    assert repeated_plan(copied, avoid) is None  # one exact of 4
    why = repeated_plan(specs(boot[0], "2. " + boot[1], "Write notes/a.md"), avoid)
    assert why and why.startswith("the plan repeats the predefined bootstrap todos of a "
                                  "strategic phase (2 of 3 todos")
    done = [["Write notes/a.md", "Write notes/b.md"]]
    assert "todos an earlier phase completed" in repeated_plan(
        specs("write notes/a.md", "Write notes/b.md", "Write output/summary.md"),
        list(ritual.avoid_sets(cfg, done, "strategic")))
    # todos that differ in one word are different tasks; one repeat in four is fine
    assert repeated_plan(specs("Write notes/c.md", "Write notes/d.md"),
                         list(ritual.avoid_sets(cfg, done, "strategic"))) is None
    assert repeated_plan(specs("Write notes/a.md", "Write c", "Write d", "Write e"),
                         [TodoSet(label="x", todos=done[0])]) is None


def test_a_plan_that_copies_the_strategic_prompt_is_refused():
    """The strategic prompt's own bullets are not tactical work, whatever the list marker.
    Ordinary plans, and plans that share a word or two with the prompt, still pass."""
    cfg = load_config("defaults", policy=False)
    avoid = list(ritual.avoid_sets(cfg, [], prompt="strategic"))
    why = repeated_plan(PROMPT_COPY, avoid)
    assert why and why.startswith("the plan repeats the strategic phase's own instructions "
                                  "(its system prompt) (5 of 5 todos")
    for marker in ("", "- ", "* ", "Step 3: ", "3) ", "Task 3: ", "(3) ", "- [ ] ", "3."):
        assert repeated_plan([marker + PROMPT_COPY[0][3:], marker + PROMPT_COPY[4][3:],
                              "- " + PROMPT_COPY[2][3:], "List the files of the document "
                              "folder", "Move final_report.pdf to temp"], avoid)
    assert repeated_plan([PROMPT_COPY[0], "Find the files named test", "Copy them to backup",
                          "Post the list"], avoid) is None  # one of four
    assert repeated_plan(["Explore the document folder with ls", "Keep notes/log.md current",
                          "Write a summary of the files to summary.md"], avoid) is None
    # the predefined todos as the model reads them, {{min_todos}}-{{max_todos}} filled in
    divide = next(t for t in cfg.strategic_todos.bootstrap if isinstance(t, str))
    ps = cfg.config.phase_settings
    shown = divide.replace("{{min_todos}}", str(ps.min_todos)).replace(
        "{{max_todos}}", str(ps.max_todos))
    assert shown != divide
    assert "predefined bootstrap todos" in (repeated_plan(["1. " + shown], avoid) or "")
    # a nested job: its own prompt and predefined todos
    nested = load_config({"extends": "defaults", "strategy": "nested"}, policy=False)
    own = list(ritual.avoid_sets(nested, [], prompt="nested",
                                 predefined=nested.nested_todos or nested.strategic_todos))
    bullets = ritual.prompt_bullets(nested.prompts["nested"], {})
    assert repeated_plan([f"{i}. {b}" for i, b in enumerate(bullets[:3], 1)], own)
    assert repeated_plan(["Summarise chapter 1 into ch1.md", "Summarise chapter 2 into ch2.md"],
                         own) is None


def test_a_prompts_bullets_are_its_lines_and_whole_items():
    template = ("Intro line\n- First {{n}} item\n  goes on here.\n- Second\n\n"
                "## The task\n{{instructions}}\n")
    assert ritual.prompt_bullets(template, {"n": "3", "instructions": "- a task step"}) == [
        "First 3 item", "First 3 item goes on here.", "Second"]


def test_a_todo_write_that_repeats_the_predefined_todos_is_refused_before_it_runs():
    """The gate would refuse it only at the phase's last todo_complete."""
    cfg = load_config("defaults", policy=False)
    boot = [t if isinstance(t, str) else t.content for t in cfg.strategic_todos.bootstrap]
    guard = ritual.plan_repeats(ritual.avoid_sets(cfg, [], "strategic"))

    def write(*contents: str) -> ToolCallInfo:
        todos = [{"id": i, "content": c} for i, c in enumerate(contents, 1)]
        return ToolCallInfo(id="w", name="todo_write", args={"phase": "P", "todos": todos})

    out = screen([ToolCallInfo(id="r", name="read_file"), write(*boot)], guard)
    assert out[0].refusal is None and out[1].refusal_code == "plan_repeats"
    assert out[1].outcome().summary.startswith(
        "Error [plan_repeats]: todos.yaml was not written: the plan repeats the predefined "
        f"bootstrap todos of a strategic phase ({len(boot)} of {len(boot)} todos")
    assert screen([write("Write notes/apples.md with '# Apples'")], guard)[0].refusal is None
    assert screen([ToolCallInfo(id="w", name="todo_write")], guard)[0].refusal is None


def test_a_strategic_phase_writes_only_the_files_its_todo_asks_for():
    todo = Todo(id=2, content="Write main_plan.md")
    guard = ritual.not_this_todo(todo, ["main_plan.md"], frozenset({"workspace.md"}))

    def write(path: str) -> ToolCallInfo:
        return ToolCallInfo(id=path, name="write_file", summary=path)

    out = screen([write("out/summary.md"), write("workspace.md")], guard)
    assert [p.refusal_code for p in out] == ["not_this_todo", "not_this_todo"]
    assert out[0].refusal == (
        "out/summary.md was not written: task 2 asks for main_plan.md, and a strategic phase "
        "writes only its plan and memory (the task's files are written by a tactical phase, "
        "from the todos of todo_write). Call write_file with path main_plan.md now, with what "
        "task 2 asks for.")
    # beside its own file, the memory may change
    out = screen([write("workspace.md"), write("main_plan.md")], guard)
    assert [p.refusal for p in out] == [None, None]
    assert screen([write("x.md")], ritual.not_this_todo(None, None))[0].refusal is None


def test_predefined_todos_name_their_files_and_the_archive():
    cfg = load_config("defaults", policy=False)
    todos, evidence = ritual.strategic_todos(cfg.strategic_todos, "rewind", {
        "min_todos": "1", "max_todos": "20", "archive": "archive/phase_4.yaml"})
    assert "archive/phase_4.yaml has them too" in todos[0].content
    assert evidence == {1: ["workspace.md"], 2: ["main_plan.md"]}
    boot, ev = ritual.strategic_todos(cfg.strategic_todos, "bootstrap",
                                      {"min_todos": "1", "max_todos": "20"})
    assert "1-20 concrete, actionable todos" in boot[2].content
    assert ev == {1: ["workspace.md"], 2: ["main_plan.md"]}
    assert ritual.missing_evidence(todos[0], {"workspace.md": "changed"}) is None
    assert ritual.missing_evidence(todos[0], None) is None  # a job from before the check
    assert ritual.missing_evidence(todos[0], {"workspace.md": "unchanged"}) == (
        "Todo 1 is not done: workspace.md has not changed since this phase began. Do it "
        "first (write_file workspace.md with what the todo asks for), then call todo_complete.")


def test_loops_across_phases():
    loops, b = ritual.Loops(), PhaseSettings(max_idle_phases=2, max_rewinds=2)
    loops.moving_on("tactical", 0, "transition")
    assert loops.stop_reason(b) is None
    loops.moving_on("strategic", 0, "work")  # strategic phases neither count nor reset
    loops.moving_on("tactical", 0, "transition")
    assert loops.stop_reason(b).startswith("2 tactical phases in a row changed no file besides "
                                           "the plan and called no tool of the task "
                                           "(phase_settings.max_idle_phases=2)")
    loops.moving_on("tactical", 1, "rewind")
    assert loops.idle_phases == 0 and loops.stop_reason(b) is None
    loops.moving_on("tactical", 1, "rewind")
    loops.moving_on("tactical", 1, "rewind")
    assert "rewound 3 times (phase_settings.max_rewinds=2)" in loops.stop_reason(b)
    assert loops.stop_reason(PhaseSettings()) is None  # the defaults: not reached


def test_a_turn_that_wrote_what_a_predefined_todo_asks_for():
    todos = [Todo(id=1, content="Update workspace.md", status="completed"),
             Todo(id=2, content="Update the plan")]
    evidence = {2: ["main_plan.md"]}
    wrote = [ToolOutcome(ok=True, changed=["main_plan.md"])]
    assert ritual.completion_hint(todos, evidence, wrote, completed=False) == [
        "main_plan.md written: that is what task 2 asks for. If task 2 is done, call "
        "todo_complete() now; if not, finish it first."]
    assert ritual.completion_hint(todos, evidence, wrote, completed=True) == []
    assert ritual.completion_hint(todos, {}, wrote, completed=False) == []  # a model's todo
    assert ritual.written_for(["workspace.md"], {"workspace.md"}, set()) == ["workspace.md"]
    assert ritual.written_for(["a.md", "b.md"], {"a.md"}, set()) == []
    assert ritual.written_for(["a.md", "b.md"], {"a.md"}, {"b.md"}) == ["a.md", "b.md"]
    assert ritual.written_for(None, {"x.md"}, set()) == []


def test_what_a_phase_did_for_the_next_one():
    todos = [Todo(id=1, content="Write a.md", status="completed", notes="done\n well"),
             Todo(id=2, content="Write b.md")]
    assert ritual.digest(4, "rewound", todos, ["workspace.md", "a.md"]) == (
        "What phase 4 did (rewound):\n- [x] 1. Write a.md - done well\n- [ ] 2. Write b.md\n"
        "Files it wrote: a.md.")
    assert ritual.digest(1, "completed", [], []).endswith("Files it wrote: none.")
    many = ritual.digest(2, "completed", [Todo(id=i, content="x" * 300) for i in range(50)],
                         [f"f{i}.md" for i in range(40)], limit=500)
    assert len(many) == 500 + len(" [...]")


def test_a_missing_file_names_one_of_its_name_written_elsewhere():
    """Exact names only: nothing is guessed from a todo's words."""
    todo = Todo(id=1, content="Update the report")
    said = ritual.missing_evidence(todo, {"report.md": "missing"},
                                   ["workspace/report.md", "workspace.md", "reports.md"])
    assert said is not None and said.startswith(
        "Todo 1 is not done: report.md does not exist (workspace/report.md was written "
        "instead: the file must be at the path named, exactly).")
    assert "instead" not in (ritual.missing_evidence(todo, {"report.md": "missing"},
                                                     ["report.txt", "a/reports.md"]) or "")
    assert ritual.elsewhere(["a/b.md"], ["b.md", "c/b.md", "a/b.md"]) == (
        " (b.md, c/b.md was written instead: the file must be at the path named, exactly)")


def test_a_file_written_at_the_folder_of_the_missing_ones_is_named():
    said = ritual.missing_evidence(Todo(id=2, content="x"), {"notes/cats.md": "missing",
                                                             "notes/dogs.md": "missing"},
                                   ["notes", "workspace.md"])
    assert said is not None and "(notes was written as one file: it is the folder of " \
        "notes/cats.md, notes/dogs.md; write each file at its own path)" in said, said
    assert ritual.elsewhere(["notes/cats.md"], ["notes.md", "note"]) == ""
