"""A file written with the conversation's prompt in it is refused with the small profile
(activities/model/echoes.py): the 1.5B model under react wrote its prompt into each of the
notes its task asked for and claimed completion."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from activities.model import echoes
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_bad_model_input import tool_messages

TASK = ("# Animal notes\n\nWrite three short notes in the workspace: `notes/cats.md`, "
        "`notes/dogs.md` and `notes/birds.md`. Each starts with a markdown heading that names "
        "the animal, followed by one sentence about it.\n")
# what the model wrote into notes/cats.md (eval-files under react, 2026-11-27), cut
ECHOED = TASK + """
## Issue that started this attempt
(none)

## Workspace memory (workspace.md)
# Workspace
(Nothing recorded yet. The strategic phase fills this file with what future phases need to know.)

# Tools
You may call one or more functions to assist with the user query.
"""


def prompt_of(task: str) -> str:
    with open("configs/prompts/react.md") as f:
        return f.read().replace("{{instructions}}", task).replace("{{issue}}", "(none)").replace(
            "{{workspace_md}}", "# Workspace\n(Nothing recorded yet. The strategic phase fills "
            "this file with what future phases need to know.)").replace("{{tools}}", "write_file")


def test_a_copy_of_the_prompt_is_told_from_the_task_and_ordinary_files():
    system = prompt_of(TASK)
    template = echoes.template_lines(Path("configs/prompts"))
    assert echoes.copied_prompt(ECHOED, system, template) == [
        "## Issue that started this attempt", "## Workspace memory (workspace.md)"]
    # the task's own words copied (a task may ask for that): not a copy of the prompt
    assert echoes.copied_prompt(TASK + "\nDone.\n", system, template) == []
    # one line of the template: an ordinary file
    note = "# Cats\n\n## The task (instructions.md)\nCats are independent animals.\n"
    assert echoes.copied_prompt(note, system, template) == []
    # the memory rewritten (a strategic phase's update), with the prompt's headings in it:
    # not a file of the work
    memory = "# Workspace\n## The task (instructions.md)\nThree notes.\n## Issue that " \
        "started this phase\nThe plan missed a note.\n"
    for path in ("workspace.md", "./main_plan.md"):
        assert echoes.written_content("write_file", json.dumps(
            {"path": path, "content": memory})) == ""
    assert echoes.written_content("write_file", json.dumps(
        {"path": "notes/report.md", "content": memory})) == memory
    # template lines another prompt has, not this conversation's: not a copy of its prompt
    assert echoes.copied_prompt("## Issue that started this attempt\n## Workspace memory "
                                "(workspace.md)\n", "another prompt", template) == []
    assert echoes.written_content("write_file", '{"path": "a", "content": "x"}') == "x"
    assert echoes.written_content("read_file", '{"path": "a"}') == ""
    assert echoes.problem([f"line {n} of the prompt" for n in range(5)]).startswith(
        "write_file not run: its content copies 5 lines of this conversation's prompt (\"line "
        "0 of the prompt\", \"line 1 of the prompt\", \"line 2 of the prompt\" and 2 more)")
    assert echoes.written_content("write_file", "not json") == ""


@pytest.mark.parametrize("profile", ["small", "none"])
async def test_a_write_of_the_prompt_is_refused_with_the_small_profile(
        profile, client, task_queue, start_job, model_server, s3):
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": profile},
              "deliverables": ["notes/cats.md"]}
    script = [step(call("write_file", path="notes/cats.md", content=ECHOED)),
              step(call("write_file", path="notes/cats.md",
                        content="# Cats\nCats are independent.\n")),
              step(call("job_complete", summary="done", deliverables=["notes/cats.md"],
                        confidence=0.9))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions=TASK,
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 150)
    msgs = tool_messages(model_server, handle.id)
    assert result.status == "completed"
    if profile == "small":
        assert msgs[0] == (
            "Error [invalid_arguments]: bad tool call: write_file not run: its content copies "
            "2 lines of this conversation's prompt (\"## Issue that started this attempt\", "
            "\"## Workspace memory (workspace.md)\"), not the file's own text. Write only what "
            "instructions.md asks this file to hold")
    else:
        assert msgs[0].startswith("Wrote ")
    assert await s3.get("switchback", f"{handle.id}/notes/cats.md") == \
        b"# Cats\nCats are independent.\n"
