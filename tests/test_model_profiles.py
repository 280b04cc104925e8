"""Model profiles (activities/model/profiles): a plug-in asked at four fixed points of a model
call - what the model is shown (instructions, tool schemas), how its reply is read (repair),
and its reply guard (refuse) - registered by entry point, never named by the engine."""

from __future__ import annotations

import asyncio
import json
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from switchback.activities.config_files import ConfigError, load_config
from switchback.activities.model import profiles
from switchback.activities.model.profiles import small
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_bad_model_input import tool_messages

TASK = ("# Animal notes\n\nWrite three short notes in the workspace: `notes/cats.md`, "
        "`notes/dogs.md` and `notes/birds.md`. Each starts with a markdown heading that names "
        "the animal, followed by one sentence about it.\n")
# a note holding the prompt's own sections, not the note's text
ECHOED = TASK + """
## Issue that started this attempt
(none)

## Workspace memory (workspace.md)
# Workspace
(Nothing recorded yet. The strategic phase fills this file with what future phases need to know.)
"""


def prompt_of(task: str) -> str:
    with open("configs/prompts/react.md") as f:
        return f.read().replace("{{instructions}}", task).replace("{{issue}}", "(none)").replace(
            "{{workspace_md}}", "# Workspace\n(Nothing recorded yet. The strategic phase fills "
            "this file with what future phases need to know.)").replace("{{tools}}", "write_file")


def args(**kw: Any) -> str:
    return json.dumps(kw)


def test_the_small_profile_reads_a_path_under_workspace_as_the_root():
    p = small.Small()
    assert json.loads(p.repair("write_file", args(path="workspace/report.md", content="x"))) == {
        "path": "report.md", "content": "x"}
    assert json.loads(p.repair("job_complete", args(
        summary="s", deliverables=["workspace/a.md", "b.md", 3]))) == {
        "summary": "s", "deliverables": ["a.md", "b.md", 3]}
    unchanged = args(path="notes/workspace/a.md")
    assert p.repair("read_file", unchanged) is unchanged
    assert p.repair("read_file", args(path="workspace/")) == args(path="workspace/")
    assert p.repair("word_count", args(path="workspace/a.md")) == args(path="workspace/a.md")
    assert p.repair("write_file", "not json") == "not json"


def test_the_small_profile_refuses_a_write_of_the_prompt():
    p, system = small.Small(), prompt_of(TASK)
    why = p.refuse("write_file", args(path="notes/cats.md", content=ECHOED), system)
    assert why == (
        "write_file not run: its content copies 2 lines of this conversation's prompt "
        "(\"## Issue that started this attempt\", \"## Workspace memory (workspace.md)\"), not "
        "the file's own text. Write only what instructions.md asks this file to hold")
    # the task's own words copied (a task may ask for that): not a copy of the prompt
    assert p.refuse("write_file", args(path="a.md", content=TASK + "\nDone.\n"), system) is None
    # the memory rewritten with the prompt's headings in it: not a file of the work
    assert p.refuse("write_file", args(path="./workspace.md", content=ECHOED), system) is None
    # template lines another prompt has, not this conversation's
    assert p.refuse("write_file", args(path="a.md", content=ECHOED), "another prompt") is None
    assert p.refuse("read_file", args(path="a.md"), system) is None
    template = small.template_lines(Path("configs/prompts"))
    assert small.copied_prompt("# Cats\n\n## The task (instructions.md)\nCats.\n", system,
                               template) == []


def test_profiles_are_found_by_name_and_an_unknown_one_is_refused():
    assert "small" in profiles.names()
    assert profiles.get("") is profiles.NULL and profiles.get("none") is profiles.NULL
    assert isinstance(profiles.get("small"), small.Small)
    assert profiles.problem("small") is None and profiles.problem("none") is None
    assert "unknown model profile 'qwen'" in (profiles.problem("qwen") or "")
    with pytest.raises(ConfigError, match="llm.profile: unknown model profile 'qwen'"):
        load_config({"extends": "defaults", "llm": {"profile": "qwen"}}, policy=False)


class Marking(profiles.ModelProfile):
    """A profile that uses every hook, to see each reach the model and the workflow."""

    name = "marking"

    def instructions(self) -> str:
        return "PROFILE NOTE: answer with tools."

    def shape_tools(self, schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**s, "function": {**s["function"], "description": "shaped"}} for s in schemas]

    def repair(self, name: str, arguments: str) -> str:
        return arguments.replace("wrong.md", "right.md")

    def refuse(self, name: str, arguments: str, prompt: str) -> str | None:
        return "no secrets here" if "secret.md" in arguments else None


@pytest.fixture
def marking(monkeypatch):
    found = {"marking": EntryPoint("marking", f"{__name__}:Marking", profiles.GROUP)}
    monkeypatch.setattr(profiles, "_registered", lambda: found)
    profiles.get.cache_clear()
    yield
    profiles.get.cache_clear()


async def test_each_hook_reaches_the_model_and_the_job(marking, client, task_queue, start_job,
                                                       model_server, s3):
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": "marking"}}
    script = [step(call("write_file", path="wrong.md", content="a\n"),
                   call("write_file", path="secret.md", content="b\n")),
              step(call("job_complete", summary="done", deliverables=["right.md"],
                        confidence=0.9))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 150)
    assert result.status == "completed", result
    first = model_server.requests(handle.id)[0]
    assert first["messages"][0]["content"].endswith("\n\nPROFILE NOTE: answer with tools.")
    assert {t["function"]["description"] for t in first["tools"]} == {"shaped"}
    assert tool_messages(model_server, handle.id)[:2] == [
        "Wrote 2 bytes to right.md.", "Error [profile_refused]: no secrets here"]
    assert await s3.get("switchback", f"{handle.id}/right.md") == b"a\n"
    assert await s3.get("switchback", f"{handle.id}/secret.md") is None
    # the conversation keeps the mended call: the model sees what was written
    second = model_server.requests(handle.id)[1]
    calls = [c for m in second["messages"] for c in m.get("tool_calls") or []]
    assert "right.md" in calls[0]["function"]["arguments"]


async def test_the_small_profile_in_a_job(client, task_queue, start_job, model_server, s3):
    config = {"extends": "defaults", "strategy": "react", "llm": {"profile": "small"},
              "deliverables": ["notes/cats.md"]}
    script = [step(call("write_file", path="notes/cats.md", content=ECHOED)),
              step(call("write_file", path="workspace/notes/cats.md",
                        content="# Cats\nCats are independent.\n")),
              step(call("job_complete", summary="done",
                        deliverables=["workspace/notes/cats.md"], confidence=0.9))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions=TASK,
                                 documents=[])
        result = await asyncio.wait_for(handle.result(), 150)
    msgs = tool_messages(model_server, handle.id)
    assert result.status == "completed" and result.verified == ["notes/cats.md"], result
    assert msgs[0].startswith("Error [profile_refused]: write_file not run: its content "
                              "copies 2 lines of this conversation's prompt")
    assert msgs[1] == "Wrote 29 bytes to notes/cats.md."
    assert await s3.get("switchback", f"{handle.id}/notes/cats.md") == \
        b"# Cats\nCats are independent.\n"
