"""The files a task's own words ask for (workflows/task_files.py): with the small model
profile they are the deliverables of a job that declares none (docs/profiles.md). The 1.5B
model ended an undeclared eval-files run `completed` with two of its three notes unwritten;
it had named only the one it wrote."""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path

import pytest

from activities.config_files import load_config
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, step, tactical, transition
from tests.test_bad_model_input import tool_messages
from workflows import completion
from workflows.contract import JobState, ToolCallInfo, ToolOutcome
from workflows.strategies.base import DeliverablesChecked
from workflows.task_files import named

ROOT = Path(__file__).resolve().parent.parent
NAMED = [
    ("Write three short notes in the workspace: `notes/cats.md`, `notes/dogs.md` and\n"
     "`notes/birds.md`. Each starts with a heading.", ["notes/cats.md", "notes/dogs.md",
                                                       "notes/birds.md"]),
    ("Add the numbers 12, 7, 30 and 51, and write the total to `output/total.txt` (the "
     "number alone).", ["output/total.txt"]),
    ("1. Write three files: `parts/a.txt` containing the word alpha, `parts/b.txt` containing\n"
     "   the word beta, and `parts/c.txt` containing the word gamma.\n2. Then read the three "
     "files and write `joined.txt` with their words.",
     ["parts/a.txt", "parts/b.txt", "parts/c.txt", "joined.txt"]),
    ("Find out whether the file `secret.md` exists (it may not). Then write `report.md` with "
     "one line: `secret.md: present` if it exists, `secret.md: absent` if not.", ["report.md"]),
    ("Write `shopping.md`: a markdown list of five fruits, each line starting with `- `.",
     ["shopping.md"]),
    ("Write whether `secret.md` exists to `report.md`.", ["report.md"]),
    ("Read `documents/a.md` and save its words as words.txt.", ["words.txt"]),
    ("Save them as notes/a.md, notes/b.md and notes/c.md.",
     ["notes/a.md", "notes/b.md", "notes/c.md"]),
    ("Create the file `./out.txt`: the total.", ["out.txt"]),
    ("Write `a.md`. Write `a.md` again, longer.", ["a.md"]),
    ("Create hello.py that prints hello, then write README.md.", ["hello.py", "README.md"]),
    ("Create a file called data/points.csv with three rows.", ["data/points.csv"]),
    ("Write `a.md` and delete `b.md`.", ["a.md"]),
    ("Write a Python script `fetch.py` that downloads the page and saves it to `page.html`.",
     ["fetch.py"]),
    ("Remove blank lines from `in.txt` and save the result as `out.txt`.", ["out.txt"]),
    ("Can you write the total to `total.txt`?", ["total.txt"]),
    ("Write the state to `save.json`.", ["save.json"]),
    ("Write the rows to `output/store.csv`.", ["output/store.csv"]),
    ("Write `generate.py` that prints the numbers.", ["generate.py"]),
    ("In the workspace, write `a.md`.", ["a.md"]),
    ("Write a summary of `in.md` to `out.md`.", ["out.md"]),
    ("1. Write three files: `a.txt`,\n    `b.txt` and `c.txt`.", ["a.txt", "b.txt", "c.txt"]),
    ("Write `tmp.md`. Then delete `./tmp.md`. Write `keep.md`. Don't delete `keep.md`.",
     ["keep.md"]),
    # phrasings of tasks nobody here wrote (session 20)
    ("Create three files in the workspace: fruits/apple.txt, fruits/pear.txt and "
     "fruits/plum.txt. Each names a colour.",
     ["fruits/apple.txt", "fruits/pear.txt", "fruits/plum.txt"]),
    ("Step 1: write `parts/a.md`, `parts/b.md` and `parts/c.md`, each with one line.\n"
     "Step 2: read the three parts and write `combined.md` listing them.",
     ["parts/a.md", "parts/b.md", "parts/c.md", "combined.md"]),
    ("Save the list of the first five primes in primes.txt, one per line.", ["primes.txt"]),
    ("Your job: make a JSON file data/config.json with the keys name and version.",
     ["data/config.json"]),
    ("Write a haiku about the sea into haiku.txt.", ["haiku.txt"]),
    ("The output should be written to out/answer.txt.", ["out/answer.txt"]),
    ("Put the word count of this task in count.txt.", ["count.txt"]),
    ("Create `hello.py` that prints hello, and `README.md` describing it.",
     ["hello.py", "README.md"]),
    ("3. Write index.md linking to both.", ["index.md"]),
    ("Read data.csv and write the total of its second column to total.txt.", ["total.txt"]),
    ("Then write `report.md` saying `present` or `absent`.", ["report.md"]),
    ("Write the answer in answer.md.", ["answer.md"]),
    ("You must deliver output.csv with two columns.", ["output.csv"]),
    ("Store the result in results/final.json.", ["results/final.json"]),
    ("Make a copy of `a.md` as `b.md`.", ["b.md"]),
    # the second review's: descriptions, comparisons, reads and choices beside the file
    ("Open `data.csv`. The column names are stored in `header.txt`.", []),
    ("A previous run's results are stored in `prev.json`; compare them and write the "
     "differences to `diff.md`.", ["diff.md"]),
    ("Create `run.sh` that runs the tests; the output is written to `test.log`.", ["run.sh"]),
    ("Write a script `convert.py` whose output should be written to `converted.json`.",
     ["convert.py"]),
    ("Write the cleaned rows to `clean.csv` with the same columns as `raw.csv`.",
     ["clean.csv"]),
    ("Create `new.csv` with the same header as `old.csv`.", ["new.csv"]),
    ("Write the errors in `app.log` to `errors.txt`.", ["errors.txt"]),
    ("Write `glossary.md` defining the terms in `spec.md` and `api.md`.", ["glossary.md"]),
    ("The summary must be saved as `summary.md`.", ["summary.md"]),
]
NOT_NAMED = [
    "If the check fails, write `error.md`.",  # a condition
    "Do not create `x.md`.",  # a negation
    "You may write `scratch.md` if you like.",  # a choice
    "Write the report. Then check `x.md`.",  # another sentence, another verb
    "Write it to `documents/x.md`.",  # the job's input
    "Write the plan to `main_plan.md` and the todos to `todos.yaml`.",  # memory files
    "Write the answer to question 3.5, e.g. now.",  # not paths
    "Write Node.js code.",  # a word with a dot, no clause after it
    "Write `../etc/passwd.txt`.",  # outside the workspace
    "```\nwrite `code.md`\n```",  # a code block
    "Intro.\n\n    Write `example.md`",  # an indented code block
    "Use write_file to make `x.md`.",  # the tool's name is not the verb
    "Write the parts to `tmp.txt`. Join them into the answer, then delete `tmp.txt`.",
    # the review's: another sense of the words before the name
    "Write a summary of the file `notes.md`.",
    "Write a script that reads the file `data.csv` and prints it.",
    "Write a script that merges the files `a.csv` and `b.csv`.",
    "Write a report from the input files `a.csv` and `b.csv`.",
    "Write a function that reads a file named `config.json`.",
    "Write a one-line summary of each of these files: `a.md`, `b.md` and `c.md`.",
    "Create a table comparing these files: `old.txt`, `new.txt`.",
    "Write a function that saves results to `out.csv`.",
    "Write a test that compares `a.txt` to `b.txt`.",
    "Write a reply to `email.txt`.",
    "Write a commit message for the changes to `app.py`.",
    "Write the report in the same format as `example.md`.",
    # conditions after the name, a choice
    "Write the errors to `errors.txt`, if any.",
    "Write to `log.txt` only if errors occur.",
    "Write `report.md` only when all tests pass.",
    "Write `present.md` if it exists and `absent.md` if not.",
    "Write `a.md`, `b.md`, or `c.md` depending on the result.",
    "If the file exists:\n- write `found.md`\n\nOtherwise:\n- write `missing.md`",
    "## Optional\n- Write `bonus.md`",
    "Optionally:\n1. Create `extra.md`.",
    # examples, quotes, comments
    "For example, write `hello.txt` with a greeting.",
    "Example: write the total to `total.txt`.",
    "Write the output to a file such as `out.txt`.",
    "> Write `hello.txt` with a greeting.",
    "<!-- write `x.md` -->",
    # names that are no files
    "Write the version as `1.2.3`.",
    "Write pi to two places as `3.14`.",
    "Write `Hello.World` to the console.",
    "Write `os.path.join` calls for each path.",
    "Write a class called `models.User`.",
    "Write a link to `example.com`.",
    "Write a guide to Node.js.",
    "Write a note to john.doe@example.com.",
    "Store `input.json` in a dict.",
    "Write `hello.txt`'s contents to stdout.",
    "Write-ups go to `writeups/summary.md`.",
    "Write access to `data.db` is needed.",
    "Write the report to `workspace/report.md`.",  # the small profile refuses workspace/
    # session 20: "in", make, store, put, or, the passive
    "Write a Python function to parse the dates in dates.csv.",
    "Write a summary of the errors in log.txt.",
    "Write tests for the function in utils.py.",
    "Make sure `config.json` exists.",
    "Make `run.sh` executable.",
    "Make the tests in `test_a.py` pass.",
    "Write `a.md` with the result if the test passes.",
    "Write `a.md` or `b.md`.",
    "Put `a.md` and `b.md` side by side.",
    "The results may be written to `out.txt`.",
    "If it works, the output should be written to `out.txt`.",
    "Write a review of the code in app.py.",
    "Your notes will be saved to `notes.md` automatically.",
    "Check that the answer is written to `answer.txt`.",
    "Ensure nothing is written to `debug.log`.",
    "By default, results are stored in `results.db`.",
    "Save it in the same folder as `input.csv`.",
    "Save a summary of each chapter in `book.md`.",
    "Save the rows in `raw.csv` that have errors to `bad.csv`.",
    "Write the first ten lines in `data.csv` to the screen.",
    "Write the dates in `events.csv` in ISO format.",
    "Write the data in `data.json` as YAML.",
    "Put the names in names.txt in alphabetical order.",
    "Make the script run.sh executable.",
    "Write `report.md` with the results, or print them to the console.",
    "Save the output to `out.txt` with timestamps, or to `out.log`.",
    "Create `notes.md` containing the list, or append it to `README.md`.",
]
@pytest.mark.parametrize("task", [
    "write " * 20_000, "Write " + "a." * 50_000, "Write x: " + "`a.md` and " * 10_000,
    "Write x. " * 30_000, "```\n" + "\n" * 49_990, "\n" * 50_000, " " * 50_000,
    ("Write" + " " * 1_985 + "x`a.md`. ") * 25, ("Write the x and " * 100 + "to `a.md`. ") * 30,
    "- If:\n" * 10_000, "    x\n" * 10_000, "Write `" + "a/" * 20_000 + "b.md`",
    ("Save x in ab.md " * 120 + ". ") * 25, ("Write x in `a.md` " * 110 + ". ") * 25,
    ("Write `a.md` " + "or " * 600 + ". ") * 25, ("x " * 900 + "should be written to a.md. ") * 25])
def test_a_hostile_task_is_read_fast(task):
    """The workflow reads the task in its workflow task: no input may stall it (each verb's
    objects end at the next verb; a sentence and the task are read up to a bound). Not a
    performance target: the first versions took minutes on the first input and 7 s on the
    blank lines (a workflow task that does not yield in 2 s is a deadlock); now 10-200 ms of
    CPU (2 s in the full suite once, a collection of its heap: measured without one)."""
    gc.collect()  # the suite's heap: a collection of it is not this code's time
    gc.disable()
    try:
        started = time.thread_time()  # this thread's CPU time: other threads, the load aside
        named(task)
        spent = time.thread_time() - started
    finally:
        gc.enable()
    assert spent < 5.0


@pytest.mark.parametrize("task,files", NAMED)
def test_the_files_a_task_asks_for(task, files):
    assert named(task) == files


@pytest.mark.parametrize("task", NOT_NAMED)
def test_what_is_no_file_the_task_asks_for(task):
    assert named(task) == []


def test_the_task_named_files_are_the_small_profiles_deliverables_only():
    """With the profile the task's files are declared (before the model's, after the job's);
    without it, never; a follow-up turn names its own."""
    small = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    plain = load_config("defaults", policy=False)
    state = completion.CompletionState(by_model=["extra.md"])
    completion.task_named(plain, state, "Write `a.md`.")
    assert state.by_task == [] and completion.declared(plain, state) == ["extra.md"]
    completion.task_named(small, state, "Write `a.md`.")
    assert completion.declared(small, state) == ["a.md", "extra.md"]  # a job started before
    completion.begin(small, state, "Write `a.md`.", lambda change: True)
    assert completion.declared(small, state) == ["a.md"]  # the model's only without them
    completion.begin(small, state, "Write a short poem.", lambda change: True)
    assert completion.declared(small, state) == ["extra.md"]
    completion.begin(plain, state, "Write `a.md`.", lambda change: True)
    assert not state.task_first and completion.declared(plain, state) == ["extra.md"]
    completion.begin(small, state, "Write `a.md`.", lambda change: True)
    state.by_model = ["extra.md"]  # the plan's own files: not a later turn's either
    completion.new_turn(small, state, 2, "Make the notes shorter.")
    assert completion.declared(small, state) == []
    completion.new_turn(small, state, 2, "Now write the total to `b.txt`.")
    assert state.by_task == ["b.txt"]
    declaring = small.model_copy(update={"config": small.config.model_copy(update={
        "deliverables": ["c.md"]})})
    assert completion.declared(declaring, state) == ["c.md"]
    for other in ({"strategy": "nested"},
                  {"nested": small.config.nested.model_copy(update={
                      "within_parent": True})}):  # a delegating job, a nested job's child
        cfg = small.model_copy(update={"config": small.config.model_copy(update=other)})
        completion.task_named(cfg, state, "Write `a.md`.")
        assert state.by_task == [], other
    auto = small.model_copy(update={"config": small.config.model_copy(update={
        "strategy": "auto"})})
    completion.task_named(auto, state, "Write `a.md`.")  # auto: until it routes to nested
    assert state.by_task == ["a.md"]
    completion.delegated(state)
    completion.new_turn(auto, state, 2, "Write `b.md`.")
    assert state.by_task == []


def test_a_follow_up_turns_files_count_once_written_in_it():
    """Turn 2 asks for a file turn 1 wrote: it is there from the start, and counts only once
    turn 2 writes it (the small profile would otherwise end the turn at once)."""
    small = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    state = completion.CompletionState()
    completion.new_turn(small, state, 2, "Write `report.md` again, with a table.")
    there = DeliverablesChecked(declared=["report.md"], delivered=["report.md"], problems=[])
    found = completion.task_files_this_turn(small, state, there)
    assert found.problems and "report.md was not written in this turn" in found.problems[0]
    state.turn_written = ["report.md"]
    assert completion.task_files_this_turn(small, state, there).problems == []
    state.turn = 1
    state.turn_written = []
    assert completion.task_files_this_turn(small, state, there).problems == []


TASK = ("# Animal notes\n\nWrite three short notes in the workspace: `notes/cats.md`, "
        "`notes/dogs.md` and\n`notes/birds.md`. Each starts with a heading naming the animal.\n")


def note(name: str) -> dict:
    return step(call("write_file", path=f"notes/{name}.md", content=f"# {name}\nA note.\n"))


def claim(*names: str) -> dict:
    return step(call("job_complete", summary="Wrote the notes.", confidence=0.9,
                     deliverables=[f"notes/{n}.md" for n in names]))


@pytest.mark.parametrize("profile", ["small", "none"])
async def test_a_claim_naming_one_of_the_tasks_files(profile, client, task_queue, start_job,
                                                     model_server):
    """The undeclared eval-files run, scripted: the note about cats written, job_complete
    names it. With the small profile the claim is refused naming the two notes missing, and
    the job completes once they are there; without it the claim is taken (the job is held
    only to what it declares and what the model names)."""
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": profile}}
    script = [note("cats"), claim("cats"), note("dogs"), note("birds"),
              claim("cats", "dogs", "birds")]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions=TASK,
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 150)
        state = await handle.query("state", result_type=JobState)
    msgs = tool_messages(model_server, handle.id)
    refused = [m for m in msgs if m.startswith("Error [job_incomplete]")]
    assert result.status == "completed" and not result.answer_only, result
    if profile == "none":
        assert not refused and result.verified == ["notes/cats.md"], result
        assert state.deliverables.by_task == []
        return
    assert len(refused) == 1 and "notes/dogs.md" in refused[0] and \
        "notes/birds.md" in refused[0], refused
    assert sorted(result.verified) == ["notes/birds.md", "notes/cats.md", "notes/dogs.md"]
    assert state.deliverables.by_task == ["notes/cats.md", "notes/dogs.md", "notes/birds.md"]


async def test_the_tasks_files_are_held_to_after_the_model_stops(client, task_queue, start_job,
                                                                 model_server):
    """With the small profile, a react model that stops calling tools with one of the three
    notes written ends `stuck` naming the two missing, never `completed`."""
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"},
              "completion": {"max_refusals": 1}}
    script = [note("cats"), claim("cats"), claim("cats"), claim("cats")]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions=TASK,
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 150)
    assert result.status == "stuck", result
    assert any("notes/dogs.md" in m for m in result.missing), result.missing


@pytest.mark.parametrize("job,files", [
    ("eval-files", ["notes/cats.md", "notes/dogs.md", "notes/birds.md"]),
    ("eval-sum", ["output/total.txt"]),
    ("eval-two-step", ["parts/a.txt", "parts/b.txt", "parts/c.txt", "joined.txt"]),
    ("eval-check-ref", ["report.md"]),
    ("eval-list", ["shopping.md"]),
    ("notes", []),  # its list items name files without a verb: its config declares them
])
def test_the_eval_jobs_tasks(job, files):
    """What the eval jobs' tasks name, as `starter.py eval --undeclared` runs them (the
    published undeclared runs depend on it)."""
    assert named((ROOT / "configs" / job / "instructions.md").read_text()) == files


async def test_phase_alternation_plans_and_ends_on_the_tasks_files(client, task_queue,
                                                                    start_job, model_server):
    """The undeclared job under phase alternation, scripted as the 1.5B model ran it: no
    plan written (todo_complete on the bootstrap's last todo, again and again). With the
    small profile the workflow plans the task's files ("Write out.md"), and the tactical
    phase that writes them ends the job `completed` by the workflow, both verified."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0},
              "llm": {"profile": "small"}}
    script = bootstrap()[:-2] + [step(call("todo_complete", notes="plan"))] * 3 + [
        step(call("write_file", path="out.md", content="# Out\n"), call("todo_complete")),
        step(call("write_file", path="notes/a.md", content="a\n"), call("todo_complete"))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions="# Two files\n\nWrite `out.md` with a heading, "
                                              "then save a note as `notes/a.md`.\n")
        result = await asyncio.wait_for(handle.result(), 150)
    assert result.status == "completed" and result.completed_by == "workflow", result
    blocks = [r["messages"][-1]["content"] for r in model_server.requests(handle.id)]
    assert any("NEXT STEP (task 1): Write out.md\n" in b for b in blocks), blocks[-3:]
    assert result.verified == ["out.md", "notes/a.md"] and not result.answer_only


def test_the_memory_files_are_no_deliverables_of_the_models_plan():
    """The 1.5B model planned workspace.md and main_plan.md as deliverables (an undeclared
    eval-files run): the memory files are there from the first phase, so a job held only to
    them would be completed by the workflow after its first tactical phase. They are left
    out of a plan's deliverables; a job_complete that names one is still checked."""
    state = completion.CompletionState()
    completion.record_outcome(
        state, ToolCallInfo(id="c1", name="todo_write", args={
            "phase": "P", "todos": [], "deliverables": ["workspace.md", "notes/a.md"]}),
        ToolOutcome(ok=True, summary="ok"))
    assert state.by_model == ["notes/a.md"]
    assert completion.valid(["main_plan.md", "out.md"]) == (["main_plan.md", "out.md"], [])


async def test_a_later_plan_that_names_no_missing_file_is_refused(client, task_queue,
                                                                   start_job, model_server):
    """An undeclared eval-files run: after its first tactical phase the 1.5B model planned
    copies of the ritual's and the transition's words for three phases, its notes never
    written. With the small profile a todo_write after the first phase that names none of
    the deliverables still missing is refused, showing the plan of them; the plan that
    names them is taken, and the phase that writes them ends the job."""
    config = {"extends": "defaults", "breakers": {"no_progress_steps": 0},
              "llm": {"profile": "small"}}
    off_task = step(call("todo_write", phase="Phase B", description="d",
                         todos=[{"id": 1, "content": "Review the work so far"}]),
                    call("todo_complete", notes="todos written"))
    on_task = step(call("todo_write", phase="Phase B", description="d",
                        todos=[{"id": 1, "content": "Write out.md"}]),
                   call("todo_complete", notes="todos written"))
    script = bootstrap("Phase A", 1) + tactical(1) + transition("Phase B", 1)[:3] + [
        off_task, on_task,
        step(call("write_file", path="out.md", content="one line\n"), call("todo_complete"))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions="# One file\n\nWrite `out.md` with one line.\n")
        result = await asyncio.wait_for(handle.result(), 150)
    refused = [m for m in tool_messages(model_server, handle.id) if "plan_off_task" in m]
    assert refused and "out.md" in refused[0] and '"Write out.md"' in refused[0], refused
    assert result.status == "completed" and result.completed_by == "workflow", result
    assert result.verified == ["out.md"]
