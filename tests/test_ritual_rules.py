"""The ritual's rules on their own (pure): the gate's staleness and repeat checks, the turn
rules, the predefined todos' evidence, loops across phases."""

from __future__ import annotations

from activities.config_files import load_config
from activities.storage.todos_file import digest, stale_problem
from tests.scripts import PROMPT_COPY
from workflows.contract import Todo, TodoSet, ToolCallInfo, ToolOutcome
from workflows.contract.config import PhaseSettings
from workflows.contract.plans import repeated_plan
from workflows.strategies import ritual
from workflows.strategies.base import PlannedCall, plan_calls


def specs(*contents: str) -> list[str]:
    return list(contents)


def planned(*names: str, refused: int | None = None) -> list[PlannedCall]:
    return [PlannedCall(ToolCallInfo(id=f"c{i}", name=n), "no" if i == refused else None)
            for i, n in enumerate(names)]


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
    """Without a profile a repeat is the same text (words and case aside); with the small
    profile, mostly the same words too."""
    cfg = load_config("defaults", policy=False)
    small = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    boot = [t if isinstance(t, str) else t.content for t in cfg.strategic_todos.bootstrap]
    copied = specs(boot[0], boot[1].replace("main_plan.md", "the plan file"), "Write notes/a.md",
                   "Write notes/b.md")  # the model's copy, padded (as the run did)
    assert repeated_plan(copied, list(ritual.avoid_sets(cfg, []))) is None  # one exact of 4
    why = repeated_plan(copied, list(ritual.avoid_sets(small, [])))
    assert why and why.startswith("the plan repeats the predefined bootstrap todos of a "
                                  "strategic phase (2 of 4 todos")
    done = [["Write notes/a.md", "Write notes/b.md"]]
    assert "todos an earlier phase completed" in repeated_plan(
        specs("write notes/a.md", "Write notes/b.md", "Write output/summary.md"),
        list(ritual.avoid_sets(cfg, done)))
    # todos that differ in one word are different tasks; one repeat in four is fine
    assert repeated_plan(specs("Write notes/c.md", "Write notes/d.md"),
                         list(ritual.avoid_sets(cfg, done))) is None
    assert repeated_plan(specs('Mcp notes/gamma.md [write {"entry": "gamma"}]'), [TodoSet(
        label="x", todos=['Mcp notes/alpha.md [write {"entry": "alpha"}]'])]) is None
    assert repeated_plan(specs("Write notes/a.md", "Write c", "Write d", "Write e"),
                         [TodoSet(label="x", todos=done[0])]) is None
    # with the small profile too: long todos on different files are different work
    long = 'Mcp notes/{0}.md [write the entry {{"entry": "{0}"}} with the mcp tool]'
    assert repeated_plan(specs(long.format("gamma")), [TodoSet(
        label="x", todos=[long.format("alpha")], similar=True)]) is None
    assert repeated_plan(specs(long.format("alpha") + " now"), [TodoSet(
        label="x", todos=[long.format("alpha")], similar=True)])


def test_a_plan_that_copies_the_strategic_prompt_is_refused_with_the_patch():
    """Patch plan-not-the-prompt: the strategic prompt's own bullets are not tactical work,
    whatever the list marker; before it, the copy above passed the gate. Ordinary plans, and
    plans that share a word or two with the prompt, still pass."""
    cfg = load_config("defaults", policy=False)
    assert repeated_plan(PROMPT_COPY, list(ritual.avoid_sets(cfg, []))) is None  # before
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
    assert shown != divide and repeated_plan([shown], list(ritual.avoid_sets(cfg, []))) is None
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
    """The third round's 1.5B model wrote the bootstrap's own todos with todo_write four times
    in a row and never called todo_complete, where the gate would have said why."""
    cfg = load_config("defaults", policy=False)
    boot = [t if isinstance(t, str) else t.content for t in cfg.strategic_todos.bootstrap]
    avoid = ritual.avoid_sets(cfg, [])

    def write(*contents: str, refused: str | None = None) -> PlannedCall:
        todos = [{"id": i, "content": c} for i, c in enumerate(contents, 1)]
        return PlannedCall(ToolCallInfo(id="w", name="todo_write", args={
            "phase": "P", "description": "", "todos": todos}), refused)

    turn = [PlannedCall(ToolCallInfo(id="r", name="read_file")), write(*boot)]
    out = ritual.refuse_repeated_plans(turn, avoid)
    assert out is not None and out[0] is turn[0] and out[1].refusal_code == "plan_repeats"
    assert out[1].refusal.startswith("todos.yaml was not written: the plan repeats the "
                                     f"predefined bootstrap todos of a strategic phase "
                                     f"({len(boot)} of {len(boot)} todos")
    assert ritual.refuse_repeated_plans([write("Write notes/apples.md with '# Apples'")],
                                        avoid) is None
    assert ritual.refuse_repeated_plans([write(*boot, refused="too many")], avoid) is None
    assert ritual.refuse_repeated_plans(planned("todo_write"), avoid) is None  # no args seen


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


def test_one_todo_complete_per_turn():
    plan = ritual.limit_todo_completes(planned("write_file", "todo_complete", "write_file",
                                               "todo_complete", "todo_complete"), 1)
    assert [p.refusal_code for p in plan if p.refusal] == ["one_todo_per_turn"] * 2
    assert plan[1].refusal is None and plan[2].refusal is None
    unlimited = planned("todo_complete", "todo_complete")
    assert ritual.limit_todo_completes(unlimited, 0) == unlimited


def test_job_complete_runs_last_and_nothing_ends_the_phase_before_it():
    plan = ritual.job_complete_last(planned("todo_complete", "job_complete", "write_file",
                                            "todo_rewind"))
    assert plan is not None
    assert [p.call.name for p in plan] == ["todo_complete", "write_file", "todo_rewind",
                                           "job_complete"]
    assert [p.refusal_code for p in plan if p.refusal] == ["job_completing"] * 2
    assert plan[-1].refusal is None
    assert ritual.job_complete_last(planned("write_file", "job_complete")) is None
    assert ritual.job_complete_last(planned("write_file", "todo_complete")) is None
    assert ritual.job_complete_last(planned("job_complete", "write_file", refused=0)) is None


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


def test_a_turn_that_wrote_what_the_todo_asks_for_is_reminded_to_complete_it():
    todos = [Todo(id=1, content="Write workspace.md", status="completed"),
             Todo(id=2, content="Write notes/apples.md with '# Apples'")]
    wrote = [ToolOutcome(ok=True, changed=["notes/apples.md"])]
    assert ritual.completion_hint(todos, {}, wrote, completed=False, small=True) == [
        "notes/apples.md written: that is what task 2 asks for. If task 2 is done, call "
        "todo_complete() now; if not, finish it first."]
    assert ritual.completion_hint(todos, {}, wrote, completed=False, small=False) == []
    assert ritual.completion_hint(todos, {}, wrote, completed=True, small=True) == []
    assert ritual.completion_hint(todos, {}, [ToolOutcome(ok=True, changed=["x.md"])],
                                  completed=False, small=True) == []
    evidence = {2: ["notes/apples.md", "main_plan.md"]}  # a todo's evidence: all of it
    assert ritual.completion_hint(todos, evidence, wrote, completed=False, small=False) == []


def test_the_file_a_todo_says_to_write():
    """Only a todo that begins by saying to write a file names "its" file: a read, a check
    or a mention names none (the hidden run's "secret.md does not exist. Do it first")."""
    def named(text):
        return ritual.written_file(Todo(id=1, content=text))
    assert named("Write notes/apples.md and output/summary.md from instructions.md") == [
        "notes/apples.md"]
    assert named("Create the file `out.txt`: hi") == ["out.txt"]
    assert named("Check that secret.md exists (read_file)") == []
    assert named("Read notes/a.md and write b.md") == []
    assert named("Write instructions.md") == [] and named("Write documents/d.md") == []
    assert named("Write ../x.md") == [] and named("Write .switchback/state.json") == []
    # a write of several files, quoted in its first sentence (the task's own sentence)
    assert named("Write three short notes in the workspace: `notes/cats.md`, `notes/dogs.md` "
                 "and `notes/birds.md`. Each starts with a heading naming `a.md`.") == [
        "notes/cats.md", "notes/dogs.md", "notes/birds.md"]
    assert named("Write `joined.txt` with the words of `parts/a.txt`") == ["joined.txt"]
    assert named("Read `parts/a.txt` and `parts/b.txt`.") == []  # not a write
    assert named("Write the report: `secret.md: absent` if it is missing.") == []
    assert named("Create two notes: `instructions.md`, `documents/x.md`, `ok.md`") == ["ok.md"]
    assert named("Write whether `secret.md` exists to `report.md`.") == []  # read, not written
    assert named("Write a summary: `report.pdf` in `summary.md`.") == []  # no list of files
    assert ritual.missing_named(Todo(id=3, content="x"), {"a.md": "changed",
                                                           "b.md": "unchanged"}) is None
    assert ritual.missing_named(Todo(id=3, content="x"), None) is None
    assert ritual.missing_named(Todo(id=3, content="x"), {"a.md": "missing"}).startswith(
        "Todo 3 is not done: a.md does not exist.")


def test_the_files_whose_writing_completes_a_todo():
    todo = Todo(id=1, content="Write notes/a.md from instructions.md and documents/d.md")
    assert ritual.written_for(todo, None, "tactical", {"notes/a.md"}, set()) == ["notes/a.md"]
    assert ritual.written_for(todo, None, "tactical", {"other.md"}, set()) == []
    assert ritual.written_for(todo, None, "strategic", {"notes/a.md"}, set()) == []
    assert ritual.written_for(todo, None, "", {"notes/a.md"}, set()) == []  # no profile
    assert ritual.written_for(Todo(id=3, content="Update workspace.md"), ["workspace.md"],
                              "strategic", {"workspace.md"}, set()) == ["workspace.md"]
    assert ritual.written_for(Todo(id=4, content="Read instructions.md"), None, "tactical",
                              {"x.md"}, set()) == []


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


def test_a_write_of_todos_yaml_is_refused_for_todo_write():
    """Eval round 13: in a rewind phase the 1.5B model wrote prose into todos.yaml with
    write_file six times; the gate took none of it and nothing counted the writes."""
    def write(path: str, error: str | None = None) -> PlannedCall:
        return PlannedCall(ToolCallInfo(id=path, name="write_file", summary=path, error=error))

    turn = [write("notes/a.md"), write("./todos.yaml"), write("todos.yaml", error="bad")]
    out = ritual.refuse_todos_file_writes(turn, lambda: "todo_write(phase=\"D\", todos=[])")
    assert out is not None and out[0] is turn[0] and out[2] is turn[2]
    assert out[1].refusal_code == "todos_by_todo_write"
    assert out[1].refusal == (
        "todos.yaml was not written: only todo_write writes it (the workflow checks the plan "
        "and accepts no other todos.yaml). Call todo_write(phase=..., todos=[{\"id\": 1, "
        "\"content\": ...}, ...]) instead. todo_write(phase=\"D\", todos=[])")
    assert ritual.refuse_todos_file_writes([write("notes/todos.yaml")], lambda: "") is None
    # a write the small profile mends (workspace/todos.yaml writes todos.yaml) is one too
    small = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    write = [ToolCallInfo(id="m", name="write_file", summary="workspace/todos.yaml")]
    mended = plan_calls(write, ["write_file"], small, "strategic", lambda change: True)
    assert mended[0].path == "todos.yaml" and mended[0].refusal is None
    out = ritual.refuse_todos_file_writes(mended, lambda: "")
    assert out is not None and out[0].refusal_code == "todos_by_todo_write"
    shown = mended[0].shown()  # what the UI's label and an approver read
    assert (shown.summary, shown.preview) == (
        "todos.yaml", "(writes todos.yaml, not its own path) workspace/todos.yaml")
    # a job started before the mend: refused as it was, whatever the rules after
    before = plan_calls(write, ["write_file"], small, "strategic", lambda change: False)
    assert (before[0].path, before[0].refusal_code) == ("", "workspace_path")
    assert ritual.refuse_todos_file_writes(before, lambda: "") is None
    assert "todos_by_todo_write" in ritual.REFUSALS and "plan_off_task" in ritual.REFUSALS


def test_a_plan_that_names_no_deliverable_still_short_is_refused():
    """Eval rounds 11 and 13: the bootstrap planned "Read the workspace and explore its
    contents" and nineteen more such todos, and no deliverable was ever planned."""
    def plan(*contents: str, refused: str | None = None) -> PlannedCall:
        return PlannedCall(ToolCallInfo(id="w", name="todo_write", args={
            "phase": "P", "todos": [{"id": i, "content": c} for i, c in enumerate(contents, 1)]
        }), refused)

    short = ["notes/apples.md", "output/summary.md"]
    vague = plan("Read the workspace and explore its contents.", "Identify the deliverables.")
    assert ritual.writes_none(vague.call.args["todos"], short)
    assert not ritual.writes_none([{"content": "Write Apples.md: # Apples"}], short)  # its name
    assert not ritual.writes_none([{"content": "x"}, {"content": "Then write output/summary.md"
                                                                 " with a line per note."}],
                                  short)
    assert ritual.writes_none([{"content": "then output/summary.md"}], short)  # named, not written
    assert ritual.writes_none([{"content": "Phase 3 completed. The deliverables are not all "
                                           "there yet: notes/apples.md does not exist. The next "
                                           "todos are the work that makes them so."}], short)
    assert not ritual.writes_none([{"content": "Create `notes/x.md`"}], ["notes/*.md"])
    for changes in ("Add a section about diet to notes/apples.md",
                    "Append the summary to `output/summary.md`.",
                    "Write a note about apples in notes/apples.md"):
        assert not ritual.writes_none([{"content": changes}], short), changes
    assert ritual.writes_none([{"content": "notes/apples.md does not exist; otherwise write "
                                           "the next phase's todos"}], short)
    assert not ritual.writes_none([], short) and not ritual.writes_none("todos", short)
    assert ritual.plans([vague]) and not ritual.plans([plan("Read it", refused="repeats")])
    out = ritual.refuse_off_task_plans([vague], short, "todo_write(...)")
    assert out is not None and out[0].refusal_code == "plan_off_task"
    assert out[0].refusal == (
        "todos.yaml was not written: no todo writes a file the task must still deliver "
        "(notes/apples.md, output/summary.md); a plan's todos are the task's concrete steps, "
        "one per file to write. todo_write(...)")
    assert ritual.refuse_off_task_plans([vague], [], "x") is None  # nothing is short
    assert ritual.refuse_off_task_plans([plan("Write notes/apples.md")], short, "x") is None


def test_a_missing_file_names_one_of_its_name_written_elsewhere():
    """Exact names only: the local 1.5B model wrote workspace/report.md and notes/shopping.md
    for the report.md and shopping.md its todos named, again and again."""
    todo = Todo(id=1, content="Write report.md")
    said = ritual.missing_named(todo, {"report.md": "missing"},
                                ["workspace/report.md", "workspace.md", "reports.md"])
    assert said is not None and said.startswith(
        "Todo 1 is not done: report.md does not exist (workspace/report.md was written "
        "instead: the file must be at the path named, exactly).")
    assert "instead" not in (ritual.missing_named(todo, {"report.md": "missing"},
                                                  ["report.txt", "a/reports.md"]) or "")
    assert ritual.elsewhere(["a/b.md"], ["b.md", "c/b.md", "a/b.md"]) == (
        " (b.md, c/b.md was written instead: the file must be at the path named, exactly)")


def test_a_file_written_at_the_folder_of_the_missing_ones_is_named():
    """An undeclared eval-files run: held to notes/cats.md, notes/dogs.md and notes/birds.md,
    the 1.5B model wrote all three into one file named `notes`, again and again."""
    todo = Todo(id=2, content="Create three short notes: `notes/cats.md`, `notes/dogs.md` "
                              "and `notes/birds.md`.")
    said = ritual.missing_named(todo, {"notes/cats.md": "missing", "notes/dogs.md": "missing"},
                                ["notes", "workspace.md"])
    assert said is not None and "(notes was written as one file: it is the folder of " \
        "notes/cats.md, notes/dogs.md; write each file at its own path)" in said, said
    assert ritual.elsewhere(["notes/cats.md"], ["notes.md", "note"]) == ""


def test_a_plan_names_a_glob_deliverable_by_a_file_it_matches():
    """A plan held to the deliverables still missing (the small profile, after the first
    phase) writes `notes/*.md` by a file it matches; a plan writing none is off the task."""
    assert not ritual.writes_none([{"id": 1, "content": "Write `notes/a.md` with a line"}],
                                  ["notes/*.md"])
    assert not ritual.writes_none([{"id": 1, "content": "Write out.md."}],
                                  ["out.md", "notes/*.md"])
    assert ritual.writes_none([{"id": 1, "content": "Review the notes"}],
                              ["notes/*.md", "out.md"])
    assert ritual.writes_none([{"id": 1, "content": "Review `notes/a.md`"}], ["notes/*.md"])


def test_a_todo_completed_without_a_call_is_refused_once():
    """Small profile (patch todo-needs-a-call): todo_complete with no work call for the
    current todo, before this turn or earlier in it, is refused once per todo."""
    todo = Todo(id=3, content="Show the files of tmp, hidden ones too")
    warned: list[int] = []
    out = ritual.refuse_workless_complete(planned("todo_complete"), todo, 0, warned)
    assert out is not None and out[0].refusal_code == "todo_not_done"
    assert out[0].refusal.startswith("Todo 3 is not done: no tool call was made for it.")
    assert warned == [3]
    assert ritual.refuse_workless_complete(planned("todo_complete"), todo, 0, warned) is None
    fresh: list[int] = []
    assert ritual.refuse_workless_complete(planned("ls", "todo_complete"), todo, 0,
                                           fresh) is None  # a call before it in the turn
    assert ritual.refuse_workless_complete(planned("todo_complete"), todo, 2, fresh) is None
    # a refused call is no work; a call after the todo_complete does not count for it
    out = ritual.refuse_workless_complete(planned("ls", "todo_complete", "cd", refused=0),
                                          todo, 0, fresh)
    assert out is not None and [p.refusal for p in out][2] is None
    assert out[1].refusal_code == "todo_not_done" and out[0].refusal == "no"
    assert ritual.work_calls(planned("ls", "todo_complete", "job_complete", "cd",
                                     refused=3)) == 1
