"""The small model profile's completion rules (`llm.profile: small`, docs/profiles.md):
`small.expect_lines` joins the verification of every job (docs/completion.md), so a
job_complete whose files lack their lines is refused with what is missing, and the job goes
on until the files hold them; after `max_refusals` the job ends `stuck` with the gap in its
notes. (The eval's 1.5B model wrote notes/apples.md without its `# Apples` heading and
finished.) Without the profile, a config that sets expect_lines is refused."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from pydantic import ValidationError

from activities.config_files import load_config
from tests import strategy_scripts
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical, transition
from tests.test_bad_model_input import tool_messages
from workflows import completion
from workflows.contract import JobState
from workflows.contract.config import CompletionSettings, SmallProfileSettings
from workflows.strategies.base import ChildOutcome

EXPECT = {"work/a_1.md": ["result a 1"], "out.md": ["# Out", "- a: 1"]}
SMALL = {"profile": "small"}


async def run(client, task_queue, start_job, model_server, script, config):
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 150)
    return handle, result, tool_messages(model_server, handle.id)


def done(summary: str = "done") -> dict:
    return step(call("job_complete", summary=summary, deliverables=["out.md"], confidence=0.9,
                     notes="n"))


async def test_job_complete_is_refused_until_the_files_hold_their_lines(
        client, task_queue, start_job, model_server, s3):
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": EXPECT}}
    script = bootstrap() + tactical(5) + finish()[:2] + [
        done("first try"),  # out.md missing: refused
        step(call("write_file", path="out.md", content="# Out\n")),
        done("second try"),  # its second line missing: refused
        step(call("write_file", path="out.md", content="# Out\n  - a: 1\n")),
        done("all there")]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed" and result.summary == "all there", result
    assert result.notes == "n"
    assert msgs.count("Error [job_incomplete]: job_complete refused (1 of 3): the deliverables "
                      "are not there: out.md does not exist. Do the work that makes them so "
                      "with the tools. The first: write_file(path=\"out.md\", content=...) "
                      "with the lines \"# Out\" and \"- a: 1\", each on a line of its own, "
                      "and what instructions.md asks for. Then call job_complete again (name "
                      "in `deliverables` the files the job wrote).") == 1
    assert any(m.startswith("Error [job_incomplete]: job_complete refused (2 of 3): the "
                            "deliverables are not there: out.md lacks the line '- a: 1'.")
               for m in msgs)
    completion = await s3.get("switchback", f"{handle.id}/output/completion.json")
    assert b'"all there"' in completion


async def test_a_transition_phase_says_whether_the_deliverables_are_in_place(
        client, task_queue, start_job, model_server):
    """The 1.5B model, its three files written, planned the ritual's todos again instead of
    calling job_complete: a transition phase's first message now says whether the declared
    deliverables are there (every job, no profile needed)."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0},
              "deliverables": ["work/a_1.md"]}
    script = bootstrap() + tactical(5) + finish()
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed"
    kickoff = next(m["content"] for r in model_server.requests(handle.id)
                   for m in r["messages"][1:2] if "Phase 3 (strategic) begins" in m["content"])
    assert ("Every deliverable declared for this job is there (work/a_1.md). If nothing else "
            "is left to do, call job_complete now." in kickoff)
    missing = {**config, "deliverables": ["out.md"]}
    script = bootstrap() + tactical(5) + finish()[:2] + [
        step(call("write_file", path="out.md", content="# Out\n")), done()]
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, missing)
    kickoff = next(m["content"] for r in model_server.requests(handle.id)
                   for m in r["messages"][1:2] if "Phase 3 (strategic) begins" in m["content"])
    assert ("\n\nThe deliverables are not all there yet: out.md does not exist. The next todos "
            "are the work that makes them so.\n\n" in kickoff)
    assert result.status == "completed"


async def test_the_small_profile_ends_the_job_at_the_tactical_phase_end(
        client, task_queue, start_job, model_server, s3):
    """The tactical phase did its todos and the files hold their lines, so the workflow
    completes the job without a transition phase (the 1.5B model wrote the files right, then
    planned again instead of calling job_complete). With a line missing, the transition
    phase starts as before."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"work/a_1.md": ["result a 1"],
                                              "work/a_5.md": ["result a 5"]}}}
    script = bootstrap() + tactical(5) + finish()
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    assert result.summary == (
        "Completed by the workflow: tactical phase 2 did all its todos and every declared "
        "deliverable is there (work/a_1.md, work/a_5.md); the model had not called "
        "job_complete (the small model profile).")
    assert result.completed_by == "workflow" and result.verified == ["work/a_1.md",
                                                                     "work/a_5.md"]
    assert result.deliverables == ["work/a_1.md", "work/a_5.md"]
    assert result.phases == 2
    assert not any("Phase 3 (strategic) begins" in m["content"]
                   for r in model_server.requests(handle.id) for m in r["messages"][1:2])
    completion = await s3.get("switchback", f"{handle.id}/output/completion.json")
    assert b"Completed by the workflow" in completion

    short = {**config, "small": {"expect_lines": {"workspace.md": ["done"]}}}  # finish()
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, short)
    assert result.status == "completed" and result.summary == "done", result
    assert result.phases == 3


async def test_a_rewind_phase_says_what_is_missing(client, task_queue, start_job,
                                                   model_server):
    """Eval round4: in a rewind phase the 1.5B model wrote the rewind's own todo as its plan,
    again and again, with two of the three files missing: a rewind phase's first message now
    says which deliverables are missing, as a transition phase's does (completion-at-rewind)."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"out.md": ["# Out"]}}}
    script = bootstrap() + [step(call("todo_rewind", issue="wrong plan"))] + transition(
        "Revised") + tactical(5, "r") + finish()[:2] + [
        step(call("write_file", path="out.md", content="# Out\n")), done()]
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    kickoff = next(m["content"] for r in model_server.requests(handle.id)
                   for m in r["messages"][1:2] if "Phase 3 (strategic) begins" in m["content"])
    assert "Rewind" in kickoff and "The deliverables are not all there yet: out.md does not " \
        "exist. The next todos are the work that makes them so." in kickoff


async def test_a_todo_that_names_a_deliverable_is_held_to_its_lines(
        client, task_queue, start_job, model_server):
    """Eval round5: the 1.5B model's todo read "Write notes/apples.md with two lines: Apples
    grow on ...", the heading lost, and it wrote just that. The todo block now shows the
    lines the file must hold, and the todo is not done until it holds them: neither by the
    write (todo-auto-complete) nor by todo_complete (patch todo-expected-lines). Eval
    round11: told to write the file "again with exactly those lines", the model wrote the same
    heading-less sentence 5 to 10 times; both refusals now show the file mended, to copy,
    and the todo is restated as that write (round12: it wrote its todo's own words again)."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"notes/apples.md": ["# Apples"]}}}
    plan = [{"id": 1, "content": "Write notes/apples.md with a sentence about apples"}]
    script = bootstrap()[:-2] + [
        step(call("todo_write", phase="Notes", description="d", todos=plan)),
        step(call("todo_complete", notes="todos")),
        step(call("write_file", path="notes/apples.md", content="Apples grow on trees.\n")),
        step(call("todo_complete", notes="apples")),  # refused: the heading is missing
        step(call("write_file", path="notes/apples.md",
                  content="# Apples\nApples grow on trees.\n")),  # done by the write
    ] + finish()[:2] + [done()]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script,
                                     config)
    assert result.status == "completed", result
    users = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
             if m["role"] == "user"]
    mend = ('Write it again with every line it must hold, this call as it is: write_file('
            'path="notes/apples.md", content="# Apples\\nApples grow on trees.\\n")')
    assert f"Todo 1 stays open: notes/apples.md lacks the line '# Apples'. {mend}" in users
    assert (f"Error [todo_not_done]: Todo 1 is not done: notes/apples.md lacks the line '# "
            f"Apples'. {mend} Then call todo_complete." in msgs)
    assert result.completed_by == "workflow"  # todo 1 done, the phase ended, the file there
    # eval round12: the model wrote its todo's own words again; the todo is restated
    restated = ('NEXT STEP (task 1): Write notes/apples.md with exactly this content (its '
                'missing lines put in): write_file(path="notes/apples.md", content="# Apples'
                '\\nApples grow on trees.\\n")')
    blocks_after = [r["messages"][-1]["content"] for r in model_server.requests(handle.id)]
    assert any(restated in b for b in blocks_after), blocks_after[5:8]
    blocks = [r["messages"][-1]["content"] for r in model_server.requests(handle.id)]
    assert any("NEXT STEP (task 1): Write notes/apples.md with a sentence about apples\nIts "
               "file must hold these lines exactly, each on a line of its own "
               "(small.expect_lines): notes/apples.md: '# Apples'" in b for b in blocks)


async def test_a_todo_whose_file_lacks_a_sentence_is_restated_as_its_lines(
        client, task_queue, start_job, model_server):
    """Eval round 14, runs 2 and 3: under its own todo ("Write notes/apples.md with the
    content of the first line of instructions.md") the model wrote the heading alone ten
    times; the missing line is a sentence, which no mend can put in. The todo is restated as
    the workflow's own todo for the file, the wording under which the same model wrote it
    right at the first try (patch todo-restated-lines)."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"notes/apples.md": [
                  "# Apples", {"glob": "[A-Za-z]* [a-z]*", "describe": "a sentence about apples"}
              ]}}}
    plan = [{"id": 1, "content": "Write notes/apples.md with the content of the first line "
             "of instructions.md"}]
    script = bootstrap()[:-2] + [
        step(call("todo_write", phase="Notes", description="d", todos=plan)),
        step(call("todo_complete", notes="todos")),
        step(call("write_file", path="notes/apples.md", content="# Apples")),  # no sentence
        step(call("write_file", path="notes/apples.md",
                  content="# Apples\nApples grow on trees.\n")),  # done by the write
    ] + finish()[:2] + [done()]
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    blocks = [r["messages"][-1]["content"] for r in model_server.requests(handle.id)]
    restated = ("NEXT STEP (task 1): Write notes/apples.md with these lines: # Apples / a "
                "sentence about apples")
    assert any(restated in b for b in blocks), blocks[7:10]
    assert not any(restated in b for b in blocks[:8])  # before the short write: its own words


async def test_a_refused_plan_is_shown_one_that_plans_the_deliverables(
        client, task_queue, start_job, model_server):
    """Eval round6: refused for copying the bootstrap's todos, the 1.5B model copied them
    again. It copies what it is shown, so the refusal shows a plan of the deliverables."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"b.md": ["# B"], "a.md": ["# A", "x"]}}}
    boot = [t if isinstance(t, str) else t.content
            for t in load_config("defaults", policy=False).strategic_todos.bootstrap]
    plan = [{"id": 1, "content": "Write a.md with these lines: # A / x"},
            {"id": 2, "content": "Write b.md with these lines: # B"}]
    script = bootstrap()[:-2] + [
        step(call("todo_write", phase="P", description="d",
                  todos=[{"id": i, "content": c} for i, c in enumerate(boot, 1)])),
        step(call("todo_write", phase="Deliverables", description="d", todos=plan)),
        step(call("todo_complete", notes="todos")),
        step(call("write_file", path="a.md", content="# A\nx\n")),
        step(call("write_file", path="b.md", content="# B\n")),
    ] + finish()[:2] + [done()]
    _, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    refusal = next(m for m in msgs if m.startswith("Error [plan_repeats]"))
    assert refusal.endswith(
        "The files this job must deliver are listed in small.expect_lines; a plan of one "
        "todo per file not yet done, for example: todo_write(phase=\"Deliverables\", todos=["
        '{"id": 1, "content": "Write a.md with these lines: # A / x"}, {"id": 2, "content": '
        '"Write b.md with these lines: # B"}])'), refusal


async def test_after_max_refusals_the_job_stops_stuck_saying_what_is_missing(
        client, task_queue, start_job, model_server):
    """A 1.5B model sent the same turn four times (every tool, job_complete among them):
    when the refusals run out the job ends `stuck`, never `completed` with its files short."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": EXPECT}, "completion": {"max_refusals": 1}}
    script = bootstrap() + tactical(5) + finish()[:2] + [done(), done("anyway")]
    _, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "stuck" and result.summary == "anyway"
    assert sum(m.startswith("Error [job_incomplete]") for m in msgs) == 1
    assert result.notes == ("n\nNot completed: the deliverables are not there: out.md does "
                            "not exist")
    assert result.missing == ["out.md does not exist"]


async def test_react_is_held_to_the_same_gate(client, task_queue, start_job, model_server):
    config = {"extends": "creator", "strategy": "react", "llm": SMALL,
              "small": {"expect_lines": {"report.md": ["# Report", "both"]}}}
    script = strategy_scripts.react()
    script = script[:-1] + [script[-1], step(call("write_file", path="report.md",
                                                  content="# Report\n\nboth\n")), script[-1]]
    _, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed"
    assert [m for m in msgs if m.startswith("Error [job_incomplete]")] == [
        "Error [job_incomplete]: job_complete refused (1 of 3): the deliverables are not "
        "there: report.md lacks the line 'both'. Do the work that makes them so with the "
        "tools. The first: write_file(path=\"report.md\", content=...) with the lines \"# "
        "Report\" and \"both\", each on a line of its own, and what instructions.md asks for. "
        "Then call job_complete again (name in `deliverables` the files the job wrote)."]


async def test_a_line_given_by_its_shape_is_checked_by_its_glob(
        client, task_queue, start_job, model_server):
    """Eval round 10, react run 1: the 1.5B model wrote its notes with their headings alone
    and the job completed, since the gate knew exact lines only. A `{glob, describe}` line
    refuses that, names what is missing by its description, and takes any line of the shape."""
    sentence = {"glob": "[A-Za-z]* [a-z]*", "describe": "a sentence about apples"}
    config = {"extends": "creator", "strategy": "react", "llm": SMALL,
              "small": {"expect_lines": {"apples.md": ["# Apples", sentence]}}}
    script = strategy_scripts.react()
    heading_only = step(call("write_file", path="apples.md", content="# Apples\n\n# Apples\n"))
    script = script[:-1] + [heading_only, script[-1], step(call(
        "write_file", path="apples.md", content="# Apples\nThey grow on trees.\n")), script[-1]]
    _, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    assert [m for m in msgs if m.startswith("Error [job_incomplete]")] == [
        "Error [job_incomplete]: job_complete refused (1 of 3): the deliverables are not "
        "there: apples.md lacks a line that is a sentence about apples. Do the work that makes "
        "them so with the tools. The first: write_file(path=\"apples.md\", content=...) with "
        "the lines \"# Apples\" and a line that is a sentence about apples, each on a line of "
        "its own, and what instructions.md asks for. Then call job_complete again (name in "
        "`deliverables` the files the job wrote)."]


async def test_a_react_job_whose_model_stops_calling_tools_is_checked_too(
        client, task_queue, start_job, model_server):
    """The 1.5B model under react answered four times with text (its calls in the wrong
    tags): the last answer became the result and the job ended `completed` with nothing
    written. With expect_lines that end is checked too: `stuck`, saying what is missing."""
    config = {"extends": "creator", "strategy": "react", "llm": SMALL,
              "small": {"expect_lines": {"report.md": ["# Report"]}}}
    talk = [step(content="I will write the report now.")] * 12  # 3 attempts of 4 answers
    handle, result, _ = await run(client, task_queue, start_job, model_server, talk, config)
    assert result.status == "stuck" and result.summary == "I will write the report now."
    assert result.notes == ("Not completed: the deliverables are not there: report.md does "
                            "not exist")
    assert result.phases == 3  # two new attempts (react-quiet-retry), then the end
    written = [step(call("write_file", path="report.md", content="# Report\n"))] + talk[:4]
    _, result, _ = await run(client, task_queue, start_job, model_server, written, config)
    assert result.status == "completed" and result.notes == "" and result.phases == 1


async def test_a_react_job_whose_model_stops_calling_tools_tries_a_fresh_attempt(
        client, task_queue, start_job, model_server):
    """Eval round 13, react runs 1, 7 and 10 (round 15's run 2 too, with the echo nudge):
    refused at its first job_complete, the 1.5B model echoed that turn's tool results as
    text until the nudges ran out, the same answer each time. With the deliverables short a
    new attempt starts, a fresh conversation told what is missing (patch
    react-quiet-retry)."""
    config = {"extends": "creator", "strategy": "react", "llm": SMALL,
              "small": {"expect_lines": {"report.md": ["# Report"]}}}
    echo = step(content="<tool_response>\nWrote 9 bytes to notes.md.\n</tool_response>")
    script = [echo] * 4 + [
        step(call("write_file", path="report.md", content="# Report\n")),
        step(call("job_complete", summary="done", deliverables=["report.md"], confidence=0.9,
                  notes=""))]
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed" and result.phases == 2, result
    first = model_server.requests(handle.id)[4]["messages"]  # attempt 2's first request
    assert [m["role"] for m in first] == ["system", "user"], first
    assert "attempt 1 ended without the deliverables: report.md does not exist. Do the work " \
        "that makes them so, then call job_complete." in first[1]["content"], first[1]["content"]


@pytest.mark.parametrize("path", ["../x.md", "/etc/passwd", ".switchback/state.json", "a//b",
                                  "a/./b", "", "a\\b"])
def test_expect_lines_names_files_in_the_workspace_only(path):
    with pytest.raises(ValidationError, match="not a relative path in the job's workspace"):
        SmallProfileSettings(expect_lines={path: ["x"]})


def test_expect_lines_is_bounded():
    with pytest.raises(ValidationError, match="at most 50 files"):
        SmallProfileSettings(expect_lines={f"f{i}.md": [] for i in range(51)})
    with pytest.raises(ValidationError, match="at most 50 lines of 500"):
        SmallProfileSettings(expect_lines={"a.md": ["x" * 501]})
    with pytest.raises(ValidationError, match="glob"):
        SmallProfileSettings(expect_lines={"a.md": [{"glob": "*" * 201, "describe": "x"}]})
    with pytest.raises(ValidationError, match="describe"):
        SmallProfileSettings(expect_lines={"a.md": [{"glob": "*"}]})
    with pytest.raises(ValidationError, match="regex"):  # a glob, not some other matcher
        SmallProfileSettings(expect_lines={"a.md": [{"regex": ".*", "describe": "x"}]})
    with pytest.raises(ValidationError):
        CompletionSettings(max_refusals=-1)


A_DONE_THEN_PLAN_B = [  # plan a.md, write it (done by the write), then the transition's files
    step(call("todo_write", phase="A", description="d",
              todos=[{"id": 1, "content": "Write a.md with these lines: # A"}])),
    step(call("todo_complete", notes="todos")),
    step(call("write_file", path="a.md", content="# A\n")),
    step(call("write_file", path="workspace.md", content="# Workspace\n\na.md written\n")),
    step(call("write_file", path="main_plan.md", content="# Plan\n\n- b.md next\n"))]


async def test_a_strategic_phase_refused_again_and_again_ends_in_the_workflows_plan(
        client, task_queue, start_job, model_server, s3):
    """Eval round11, run 1: its two notes written, the 1.5B model was asked to plan the
    missing summary and wrote the transition's own todos as the plan instead, refused each
    time, until the loop breaker stopped the job. After `small.plan_after_refusals`
    refused calls in a strategic phase, the workflow plans the deliverables still short
    itself (patch plan-by-workflow): here the one file the model had not written."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"a.md": ["# A"], "b.md": ["# B"]}}}
    transition_todos = [t if isinstance(t, str) else t.content
                        for t in load_config("defaults", policy=False).strategic_todos.transition]
    again = step(call("todo_write", phase="P", description="d", todos=[
        {"id": i, "content": c} for i, c in enumerate(transition_todos, 1)]))
    script = bootstrap()[:-2] + [
        *A_DONE_THEN_PLAN_B,
        again, again, again,  # three refused plans: the workflow plans b.md
        step(call("write_file", path="b.md", content="# B\n")),
    ] + finish()[:2] + [done()]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    # the model saw two of the refusals; the third ended the phase
    assert msgs.count(next(m for m in msgs if m.startswith("Error [plan_repeats]"))) == 2
    kickoffs = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
                if m["role"] == "user" and " begins: " in m["content"]]
    assert any(k.startswith("Phase 4 (tactical) begins: Deliverables (planned by the "
                            "workflow after refused calls)") for k in kickoffs), kickoffs
    blocks = [r["messages"][-1]["content"] for r in model_server.requests(handle.id)]
    assert any("NEXT STEP (task 1): Write b.md with these lines: # B" in b for b in blocks)
    trip = await s3.get("switchback", f"{handle.id}/output/breakers/planned_3.json")
    assert b'"todos": [\n    "Write b.md with these lines: # B"\n  ]' in trip, trip
    assert b"3 refused calls in strategic phase 3" in trip


async def test_the_workflow_does_not_plan_when_told_not_to(
        client, task_queue, start_job, model_server):
    """`small.plan_after_refusals: 0`: the refusals go on and the loop breaker ends the
    job, as before the rule."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"a.md": ["# A"]}, "plan_after_refusals": 0}}
    boot = [t if isinstance(t, str) else t.content
            for t in load_config("defaults", policy=False).strategic_todos.bootstrap]
    again = step(call("todo_write", phase="P", description="d", todos=[
        {"id": i, "content": c} for i, c in enumerate(boot, 1)]))
    script = bootstrap()[:-2] + [again] * 16
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "stuck", result
    kickoffs = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
                if m["role"] == "user" and "planned by the workflow" in m["content"]]
    assert kickoffs == []


async def test_a_plan_that_names_no_file_still_short_is_refused_with_the_plan_shown(
        client, task_queue, start_job, model_server):
    """Eval rounds 11 and 13: the 1.5B model's bootstrap planned twenty todos such as "Read
    the workspace and explore its contents", the tactical phase read_file'd 'workspace' until
    the loop breaker stopped the job. With `small.plans_name_deliverables` a todo_write
    that names none of the files a check finds short is refused, the plan of them shown
    (patch deliverables-plan): a.md and b.md at first, b.md alone once a.md holds its line."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {
        "expect_lines": {"a.md": ["# A"], "b.md": ["# B"]}, "plans_name_deliverables": True}}
    script = bootstrap()[:-2] + [
        step(call("todo_write", phase="P", description="d", todos=[
            {"id": 1, "content": "Read the workspace and explore its contents."},
            {"id": 2, "content": "Identify the deliverables and their requirements."}])),
        *A_DONE_THEN_PLAN_B,
        step(call("todo_write", phase="R", description="d",
                  todos=[{"id": 1, "content": "Review a.md"}])),  # a.md is done: refused
        step(call("todo_write", phase="B", description="d",
                  todos=[{"id": 1, "content": "Write b.md with these lines: # B"}])),
        step(call("todo_complete", notes="todos")),
        step(call("write_file", path="b.md", content="# B\n")),
    ] + finish()[:2] + [done()]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    refused = [m for m in msgs if m.startswith("Error [plan_off_task]")]
    assert refused == [
        "Error [plan_off_task]: todos.yaml was not written: no todo writes a file the task must "
        "still deliver (a.md, b.md); a plan's todos are the task's concrete steps, one per file "
        "to write. The files this job must deliver are listed in small.expect_lines; a "
        "plan of one todo per file not yet done, for example: todo_write(phase=\"Deliverables\""
        ", todos=[{\"id\": 1, \"content\": \"Write a.md with these lines: # A\"}, {\"id\": 2, "
        "\"content\": \"Write b.md with these lines: # B\"}])",
        "Error [plan_off_task]: todos.yaml was not written: no todo writes a file the task must "
        "still deliver (b.md); a plan's todos are the task's concrete steps, one per file to "
        "write. The files this job must deliver are listed in small.expect_lines; a plan "
        "of one todo per file not yet done, for example: todo_write(phase=\"Deliverables\", "
        "todos=[{\"id\": 1, \"content\": \"Write b.md with these lines: # B\"}])"], msgs


async def test_a_plan_naming_no_deliverable_is_taken_unless_the_config_asks(
        client, task_queue, start_job, model_server):
    """Without `small.plans_name_deliverables` (a long job's first phases may only read
    and plan) the same vague plan is taken as before."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"work/a_1.md": ["result a 1"]}}}
    script = bootstrap() + tactical(5) + finish()
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    assert not [m for m in msgs if "[plan_off_task]" in m], msgs


async def test_a_write_of_todos_yaml_is_refused_and_ends_in_the_workflows_plan(
        client, task_queue, start_job, model_server, s3):
    """Eval round 13, run 3: asked for todos.yaml, the 1.5B model wrote prose into it with
    write_file over and over (the gate takes only todo_write's), each write taken and
    reminded to call todo_complete. With expect_lines such a write is refused, the
    todo_write to make shown, and counted: after `small.plan_after_refusals` the
    workflow plans the deliverables itself (patch deliverables-plan)."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "small": {"expect_lines": {"a.md": ["# A"]}}}
    prose = step(call("write_file", path="todos.yaml",
                      content="The revised phase has been planned."))
    script = bootstrap()[:-2] + [prose] * 3 + [
        step(call("write_file", path="a.md", content="# A\n")),
    ] + finish()[:2] + [done()]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed", result
    refusal = ("Error [todos_by_todo_write]: todos.yaml was not written: only todo_write writes "
               "it (the workflow checks the plan and accepts no other todos.yaml). Call "
               "todo_write(phase=..., todos=[{\"id\": 1, \"content\": ...}, ...]) instead. The "
               "files this job must deliver are listed in small.expect_lines; a plan of "
               "one todo per file not yet done, for example: todo_write(phase=\"Deliverables\", "
               "todos=[{\"id\": 1, \"content\": \"Write a.md with these lines: # A\"}])")
    assert msgs.count(refusal) == 2, msgs  # the third ended the phase
    assert await s3.get("switchback", f"{handle.id}/output/breakers/planned_1.json")
    assert b"planned" not in (await s3.get("switchback", f"{handle.id}/todos.yaml") or b"")


async def test_the_small_profile_plans_the_declared_deliverables_after_refusals(
        client, task_queue, start_job, model_server):
    """Eval jobs without expect_lines: the 1.5B model called todo_complete on the bootstrap's
    last todo again and again without todo_write. With the small profile the workflow plans
    one todo per declared deliverable not there yet, and the tactical phase that writes it
    ends the job."""
    config = {"extends": "creator", "breakers": {"no_progress_steps": 0}, "llm": SMALL,
              "deliverables": ["out.md", "notes/*.md"]}
    script = bootstrap()[:-2] + [step(call("todo_complete", notes="plan"))] * 3 + [
        step(call("write_file", path="out.md", content="# Out\n"), call("todo_complete")),
        step(call("write_file", path="notes/a.md", content="a\n"), call("todo_complete"))]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script,
                                     config)
    assert result.status == "completed" and result.completed_by == "workflow", result
    assert sum(m.startswith("Phase transition rejected") for m in msgs) >= 2, msgs
    blocks = [r["messages"][-1]["content"] for r in model_server.requests(handle.id)]
    assert any("NEXT STEP (task 1): Write out.md\n" in b for b in blocks), blocks[-3:]
    assert any("Write the files matching notes/*.md" in b for b in blocks)
    assert result.verified == ["out.md", "notes/a.md"]


def claim() -> dict:
    return step(call("job_complete", summary="The task was completed successfully.",
                     deliverables=[], confidence=0.9))


@pytest.mark.parametrize("profile", ["small", "none"])
async def test_a_claim_before_any_work_in_a_job_that_declares_nothing(
        profile, client, task_queue, start_job, model_server):
    """The 1.5B model under react claimed completion with none of the task's files written
    and no deliverable named: with the small profile that claim is refused while no work is
    done (nothing the task did not ask for is named); a read, a delete or a memory write is
    no work, a file of the work or a tool of the task is. Once the refusals are used up the
    claim is let through and held to it: in a job with tools of the task none of which was
    called it ends `stuck` (react under BFCL ended three turns `completed` with none of the
    case's calls), in a job without any it is an answer-only completion. Without the
    profile the first claim is an answer-only completion."""
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": profile},
              "tools": {"domain": ["word_count"], "workspace": [
                  "read_file", "write_file", "list_files", "delete_file"]}}
    script = [step(call("list_files")), claim(), claim(), claim(), claim()]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script,
                                     config)
    refused = [m for m in msgs if m.startswith("Error [job_incomplete]")]
    if profile == "none":
        assert result.status == "completed" and result.answer_only, result
        assert not refused and len(model_server.requests(handle.id)) == 2
        return
    assert result.status == "stuck" and not result.answer_only, result
    assert result.missing == [completion.NO_WORK.format(tools="word_count") + (
        "; its claim of completion was refused 3 times, then taken as an answer")], result
    assert "Not completed: the work is not done: no work was done" in result.notes
    assert len(model_server.requests(handle.id)) == 5, "the fourth claim ended the job"
    assert len(refused) == 3 and all(completion.nothing_done_problem(load_config(
        config, policy=False)) in m and "(word_count)" in m for m in refused), refused
    for work, refusals, status in (
            ([step(call("write_file", path="sum.txt", content="100\n"))], 0, "completed"),
            ([step(call("write_file", path="sum.txt", content="100\n")),
              step(call("delete_file", path="sum.txt"))], 0, "completed"),  # the write was work
            ([step(call("write_file", path="workspace.md", content="# Plan\n"))], 3, "stuck"),
            ([step(call("write_file", path="a.md", content="words here\n")),
              step(call("word_count", path="a.md"))], 0, "completed")):
        script = work + [claim()] * (refusals + 1)
        _, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
        assert result.status == status and result.answer_only == (status == "completed"), (
            work, result)
        assert sum("job_incomplete" in m for m in msgs) == refusals, (work, msgs)
    script = [step(call("word_count", path="instructions.md")), claim()]  # a tool of the task
    _, result, msgs = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "completed" and not any("job_incomplete" in m for m in msgs)
    no_tools = {**config, "tools": {"domain": [], "workspace": ["read_file", "list_files"]}}
    script = [step(call("read_file", path="instructions.md"))] + [claim()] * 4
    _, result, msgs = await run(client, task_queue, start_job, model_server, script, no_tools)
    assert result.status == "completed" and result.answer_only, result  # a question's answer
    refused = [m for m in msgs if m.startswith("Error [job_incomplete]")]
    assert len(refused) == 3 and all(completion.NOTHING_DONE in m for m in refused), refused


async def test_a_last_text_answer_with_no_work_done_ends_stuck(
        client, task_queue, start_job, model_server):
    """react's other way to end a turn, its last text answer after the fresh attempts, is
    held to the same rule: with the small profile, in a job with tools of the task none of
    which was called, `stuck`, never an answer-only `completed`."""
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"},
              "tools": {"domain": ["word_count"]}}
    script = [step(content="The task is done.")] * 12  # 3 attempts of 1 answer + 3 nudges
    handle, result, _ = await run(client, task_queue, start_job, model_server, script, config)
    assert result.status == "stuck" and not result.answer_only, result
    assert result.missing == [completion.NO_WORK.format(tools="word_count")], result
    assert len(model_server.requests(handle.id)) == 12


async def test_a_turn_with_no_work_may_ask_but_the_job_never_ends_completed_on_one(
        client, task_queue, start_job, model_server):
    """In a job of several turns, a turn that does no work may have asked the user something
    (in BFCL's miss_param cases one turn's right answer is no call): it is that turn's
    answer and the next instruction is taken. The job's end is held to the rule: after a
    last turn that did work it is `completed`, after one that did none `stuck`."""
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"},
              "tools": {"domain": ["word_count"]}, "follow_up": {"wait_seconds": 1}}
    work = [step(call("word_count", path="instructions.md")), claim()]
    for turns, status in (([claim()] * 4 + work, "completed"), (work + [claim()] * 4, "stuck")):
        async with running_worker(client, task_queue):
            handle = await start_job(turns, model_server, config=config, instructions="x",
                                     documents=[])
            await handle.signal("instruct", "Count the words again.")  # queued for turn 2
            result = await asyncio.wait_for(handle.result(), 150)
            state = await handle.query("state", result_type=JobState)
        assert state.turn == 2 and result.status == status, (status, result)
        assert len(model_server.requests(handle.id)) == 6
        assert result.answer_only == (status == "completed"), result  # (no file named)
        assert bool(result.missing) == (status == "stuck"), result


def test_the_check_of_an_answer_only_claim_knows_what_it_does_not_know():
    """State kept before `worked` was recorded (a carry, a snapshot), and a restore: not
    known, taken as done. A nested job's child is never held to it; a follow-up turn is,
    afresh; a nested parent's children are work."""
    cfg = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    child = cfg.model_copy(update={"config": cfg.config.model_copy(update={
        "nested": cfg.config.nested.model_copy(update={"within_parent": True})})})
    old = completion.CompletionState.model_validate({"by_model": [], "refusals": 1})
    assert old.worked is None and not completion.nothing_done(cfg, old)
    fresh = completion.CompletionState(worked=False)
    assert completion.nothing_done(cfg, fresh) and not completion.nothing_done(child, fresh)
    completion.restored(fresh)
    assert not completion.nothing_done(cfg, fresh)
    completion.new_turn(cfg, fresh, 2, "Answer the question.")
    assert completion.nothing_done(cfg, fresh)
    completion.record_children(fresh, [ChildOutcome(key="t1", job_id="c", status="completed",
                                                    folder="subjobs/c")])
    assert not completion.nothing_done(cfg, fresh)


def test_a_claim_with_no_work_is_held_to_it_only_in_a_job_with_tools_of_the_task():
    """The small profile's let-through claim with nothing done: `stuck` in a job with tools of
    the task (the refusal names them, the result says which and how often it was refused);
    an answer in a job without any; never without the profile."""
    tools = {"domain": [f"tool_{i}" for i in range(8)]}
    cfg = load_config({"extends": "defaults", "llm": {"profile": "small"}, "tools": tools},
                      policy=False)
    bare = load_config({"extends": "defaults", "llm": {"profile": "small"},
                        "tools": {"domain": []}}, policy=False)
    other = load_config({"extends": "defaults", "llm": {"profile": "none"}, "tools": tools},
                        policy=False)
    state = completion.CompletionState(worked=False, refusals=3)
    assert completion.empty_handed(cfg, state)
    assert not completion.empty_handed(bare, state) and not completion.empty_handed(other, state)
    said = completion.nothing_done_problem(cfg)
    assert "(tool_0, tool_1, tool_2, tool_3, tool_4, tool_5, ...)" in said, said
    assert completion.nothing_done_problem(bare) == completion.NOTHING_DONE
    found = completion.no_work(cfg, state)
    assert not found.declared and not found.delivered and "refused 3 times" in found.problems[0]
    state.worked = True
    assert not completion.empty_handed(cfg, state)


@pytest.mark.parametrize("profile", ["small", "none"])
async def test_a_write_under_a_workspace_folder(profile, client, task_queue, start_job,
                                                model_server, s3):
    """The 1.5B model wrote workspace/report.md for report.md, and again when refused: with
    the small profile the write goes to report.md and its result says so; without it, or
    in a job that declares a deliverable under workspace/, it is an ordinary path."""
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": profile},
              "deliverables": ["report.md"]}
    claim = step(call("job_complete", summary="done", deliverables=["report.md"],
                      confidence=0.9))
    script = [step(call("write_file", path="workspace/report.md", content="x: absent\n")),
              claim]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script + (
        [] if profile == "small" else [step(call("write_file", path="report.md",
                                                 content="x: absent\n")), claim]), config)
    placed = await s3.get("switchback", f"{handle.id}/workspace/report.md")
    root = await s3.get("switchback", f"{handle.id}/report.md")
    assert result.status == "completed"
    if profile == "small":
        assert msgs[0] == ("Wrote 10 bytes to report.md. (Paths are relative to the workspace "
                           "root, which is no folder named workspace/: workspace/report.md is "
                           "report.md.)")
        assert (placed, root) == (None, b"x: absent\n")
    else:  # written where it says: the deliverable is missing until written
        assert (placed, root) == (b"x: absent\n", b"x: absent\n")
        assert msgs[0] == "Wrote 10 bytes to workspace/report.md."
        assert "report.md does not exist" in msgs[1]
    declared = {**config, "deliverables": ["workspace/report.md"]}
    script = [script[0], step(call("job_complete", summary="done",
                                   deliverables=["workspace/report.md"], confidence=0.9))]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script,
                                     declared)
    assert result.status == "completed" and msgs[0] == "Wrote 10 bytes to workspace/report.md."
    assert await s3.get("switchback", f"{handle.id}/workspace/report.md") == \
        b"x: absent\n"


async def test_a_claim_under_a_workspace_folder_with_the_small_profile(
        client, task_queue, start_job, model_server):
    """Its write mended to joined.txt, the 1.5B model claimed `workspace/joined.txt`, was
    refused as missing, and its react job ended `stuck` with every file right: with the
    small profile the claim means the file the mend wrote."""
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"}}
    script = [step(call("write_file", path="workspace/joined.txt", content="a\nb\n")),
              step(call("job_complete", summary="done", deliverables=["workspace/joined.txt"],
                        confidence=0.9))]
    handle, result, msgs = await run(client, task_queue, start_job, model_server, script,
                                     config)
    assert result.status == "completed" and result.verified == ["joined.txt"], result


def test_a_refusal_shows_the_write_of_the_first_missing_file_with_the_small_profile():
    """Told "Do the work that makes them so with the tools", the 1.5B model read the three
    missing notes and called job_complete again, four times: with the small profile the
    refusal shows the write of the first one to copy."""
    from workflows.strategies import completion_gate
    small = load_config({"extends": "defaults", "llm": {"profile": "small"}}, policy=False)
    plain = load_config({"extends": "defaults", "llm": {"profile": "none"}}, policy=False)
    problems = ["no file matches out/*.md", "notes/cats.md does not exist (notes/x/cats.md "
                "does: ...)", "notes/dogs.md does not exist"]
    assert completion_gate.fix_example(small, problems) == (
        ' The first: write_file(path="notes/cats.md", content=...) with what instructions.md '
        "asks for.")
    assert completion_gate.fix_example(plain, problems) == ""
    assert completion_gate.fix_example(small, ["no file matches out/*.md"]) == ""
    # a write under workspace/ would be refused (plan_calls): no example of it
    assert completion_gate.fix_example(small, ["workspace/r.md does not exist"]) == ""


def test_the_task_plan_is_the_tasks_own_steps():
    from workflows.strategies.completion_gate import task_plan
    task = ("# Two steps\n\n1. Write three files: `a.txt` with alpha,\n   `b.txt` with beta.\n"
            "2. Then join them into `ab.txt`.\n\nKeep it short please.\n\nOk.\n")
    assert [t["content"] for t in task_plan(task, 20)] == [
        "Write three files: `a.txt` with alpha, `b.txt` with beta.",
        "Then join them into `ab.txt`.", "Keep it short please."]
    assert len(task_plan(task, 2)) == 2
    code = "Do this:\n\n- read a.md\n\n```\n# not a heading\nx = 1\n```\n\n[instructions.md is 9"
    assert [t["content"] for t in task_plan(code, 20)] == ["read a.md"]  # no code, no cut note
    later = task + "\n\n## Follow-up instruction (turn 2)\n\nAlso write `c.txt` with gamma.\n"
    assert task_plan(later, 20) == [{"id": 1, "content": "Also write `c.txt` with gamma."}]


async def test_a_job_without_deliverables_refused_again_and_again_gets_the_tasks_steps(
        client, task_queue, start_job, model_server, s3):
    """An undeclared eval-sum run: its plans refused as copies of the ritual's todos, the
    1.5B model called todo_complete on the missing todos.yaml ten times until the loop
    breaker stopped the job. With the small profile and no deliverables declared (nor named
    by the task: tests/test_task_files.py), the workflow plans the task's own steps after
    `small.plan_after_refusals` refusals."""
    config = {"extends": "defaults", "breakers": {"no_progress_steps": 0}, "llm": SMALL}
    bootstrap_todos = [t if isinstance(t, str) else t.content
                       for t in load_config("defaults", policy=False).strategic_todos.bootstrap]
    again = step(call("todo_write", phase="P", description="d", todos=[
        {"id": i, "content": c} for i, c in enumerate(bootstrap_todos, 1)]))
    script = bootstrap()[:-2] + [again, again, again] + [  # three refused plans
        step(call("write_file", path="sum.txt", content="100\n")),
        step(call("todo_complete", notes="written"))] + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions="# A sum\n\nAdd 12 and 88 and keep the total in "
                                              "a file.\n")
        result = await asyncio.wait_for(handle.result(), 150)
    assert result.status == "completed", result
    kickoffs = [m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
                if m["role"] == "user" and " begins: " in m["content"]]
    assert any(k.startswith("Phase 2 (tactical) begins: The task's steps (planned by the "
                            "workflow after refused calls)") for k in kickoffs), kickoffs
    trip = await s3.get("switchback", f"{handle.id}/output/breakers/planned_1.json")
    assert b"Add 12 and 88 and keep the total in a file." in trip, trip


async def test_a_mended_write_where_a_workspace_folder_exists(s3):
    """The tool activity mends a write (ToolRequest.path) only while the workspace has no
    folder named workspace/: where one exists, the call writes the path it asked for."""
    from activities.storage.conversations import ConversationStore
    from activities.tools.run import ToolActivities
    from workflows.contract import ToolLimits, ToolRequest, WorkspaceRef

    store = ConversationStore(s3)
    tools = ToolActivities(s3, store)

    async def write(ws: WorkspaceRef, index: int) -> str:
        args = json.dumps({"path": "workspace/report.md", "content": "r\n"})
        await store.put_once(ws, "c", index, {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"w{index}", "type": "function",
             "function": {"name": "write_file", "arguments": args}}]})
        outcome = await tools.run_tool(ToolRequest(
            workspace=ws, conversation="c", assistant_index=index, call_id=f"w{index}",
            name="write_file", result_index=index + 1, inline_max_chars=500, path="report.md",
            limits=ToolLimits(read_max_chars=1000, max_file_bytes=1000, min_todos=1,
                              max_todos=9)))
        return outcome.summary

    ws = WorkspaceRef(bucket="switchback", job_id=f"mend-{uuid.uuid4().hex[:8]}")
    assert await write(ws, 1) == (
        "Wrote 2 bytes to report.md. (Paths are relative to the workspace root, which is no "
        "folder named workspace/: workspace/report.md is report.md.)")
    assert await s3.get("switchback", f"{ws.job_id}/report.md") == b"r\n"
    await s3.put("switchback", f"{ws.job_id}/workspace/seed.md", b"s\n")
    assert await write(ws, 3) == "Wrote 2 bytes to workspace/report.md."
    assert await s3.get("switchback", f"{ws.job_id}/workspace/report.md") == b"r\n"


async def test_the_small_profile_shows_what_the_task_says_under_a_todo(
        client, task_queue, start_job, model_server):
    """A todo says which file to write; what goes in it is in the task, far up the prompt.
    With the small profile the todo block shows, under the current todo, the task's words
    about its file (the 1.5B model wrote `notes/apples.md` without the heading its task
    asked for); without the profile, no such note."""
    task = ("# Two files\n\nWrite these files:\n\n1. `out.md`: two lines, the first exactly "
            "`# Out`.\n2. `other.md`: the word other.\n")
    plan = [{"id": 1, "content": "Write out.md"}, {"id": 2, "content": "Write other.md"}]
    script = bootstrap()[:-2] + [
        step(call("todo_write", phase="Files", description="d", todos=plan)),
        step(call("todo_complete", notes="todos written")),
        step(call("write_file", path="out.md", content="# Out\nx\n"), call("todo_complete")),
        step(call("write_file", path="other.md", content="other\n"), call("todo_complete")),
    ] + finish(deliverables=["out.md", "other.md"])
    blocks = {}
    for profile in ("small", "none"):
        config = {"extends": "creator", "breakers": {"no_progress_steps": 0},
                  "llm": {"profile": profile}, "deliverables": ["out.md", "other.md"]}
        async with running_worker(client, task_queue):
            handle = await start_job(script, model_server, config=config, instructions=task,
                                     documents=[])
            result = await asyncio.wait_for(handle.result(), 150)
        blocks[profile] = [r["messages"][-1]["content"]
                           for r in model_server.requests(handle.id)]
        assert result.status == "completed", result
    note = ("NEXT STEP (task 1): Write out.md\nWhat the task says about out.md:\n"
            "1. `out.md`: two lines, the first exactly `# Out`.\nWhen it is done")
    assert any(note in b for b in blocks["small"]), blocks["small"][-3:]
    assert any("What the task says about other.md:\n2. `other.md`: the word other.\n" in b
               for b in blocks["small"])
    assert not any("What the task says" in b for b in blocks["none"])
