"""Model profiles (activities/model/profiles): a plug-in asked at four fixed points of a model
call - what the model is shown (instructions, tool schemas), how its reply is read (repair),
and its reply guard (refuse) - registered by entry point, never named by the engine."""

from __future__ import annotations

import asyncio
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from switchback.activities.config_files import ConfigError, load_config
from switchback.activities.model import profiles
from switchback.activities.model.profiles import small
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_bad_model_input import tool_messages


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
