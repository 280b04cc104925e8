"""The committed histories of representative jobs replay against the current code.

A change to workflow code that running jobs would see must keep these green by
guarding it with `workflow.patched`; see README "Changing workflow code".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from operate.replay import replay

FILES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_there_are_histories_of_each_kind():
    """Each scenario from before the local-activity patches, after them, after the tool
    listing (which adds a job calling an MCP server's tool) and after the typed failures
    (which add a failing local-activity tool)."""
    for tag, extra in (("", set()), (".local-ops", set()), (".tool-listing", {"mcp"}),
                       (".typed-failures", {"local-failure"}), (".ritual", {"ritual"})):
        names = {f.stem.split("-run")[0] for f in FILES if f.stem.endswith(tag)
                 and (tag or "." not in f.stem)}
        names = {n.removesuffix(tag) for n in names}
        assert {"plain", "rewind", "approval", "continue-as-new", "failure", *extra} <= names, tag


def patches(name: str) -> set[str]:
    path = Path(__file__).parent / "histories" / name
    history = WorkflowHistory.from_json(name, json.loads(path.read_text()))
    return {json.loads(p.data).get("id") for e in history.events
            if e.marker_recorded_event_attributes.marker_name == "core_patch"
            for ps in e.marker_recorded_event_attributes.details.values()
            for p in ps.payloads}


def test_the_ritual_histories_take_the_ritual_paths():
    """#17: a todo's files checked before it is done (every job since: the bootstrap todos
    name workspace.md and main_plan.md), and a turn's job_complete moved last."""
    for name in ("plain", "ritual"):
        assert "todo-evidence" in patches(f"{name}.ritual.json")
    assert "job-complete-last" in patches("ritual.ritual.json")
    assert "job-complete-last" not in patches("plain.ritual.json")  # asked only when needed
    assert "todo-evidence" not in patches("plain.typed-failures.json")


def test_a_failing_local_activity_history_takes_the_typed_failure_path():
    assert "typed-failures" in patches("local-failure.typed-failures.json")
    assert "typed-failures" not in patches("failure.local-ops.json")


@pytest.mark.parametrize("patch", ["local-tool-calls", "inline-tool-results",
                                   "local-workspace-ops"])
def test_the_newer_histories_take_the_patched_paths(patch: str):
    assert patch in patches("plain.local-ops.json")
    assert patch not in patches("plain.json")


def test_the_tool_listing_histories_list_tools_once():
    for name in ("plain", "mcp"):
        assert "tool-listing" in patches(f"{name}.tool-listing.json")
        text = (Path(__file__).parent / "histories" / f"{name}.tool-listing.json").read_text()
        assert text.count('"list_tools"') == 1
    assert "tool-listing" not in patches("plain.local-ops.json")
    for run in (2, 3):  # continued runs carry the resolved config: no second listing
        text = (Path(__file__).parent / "histories" /
                f"continue-as-new-run{run}.tool-listing.json").read_text()
        assert '"list_tools"' not in text


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
async def test_history_replays(path: Path):
    history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
    [report] = await replay([history], pydantic_data_converter)
    assert report.ok, report.detail
