"""The committed histories replay against the current code (docs/versioning.md).

One history per scenario, recorded at the second baseline (`python -m tests.histories.record`,
`... singles`, `... strategies`, `... hostile`, `... follow-up`) under the scenario's name; a
change guarded by `workflow.patched(<id>)` after the baseline records its own under
`tests/histories/<id>/`, and `test_every_patch_has_its_history` holds it to that.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from switchback.operate.replay import replay
from tests.markers import local_activity

HERE = Path(__file__).parent / "histories"
ROOT = Path(__file__).parent.parent
FILES = sorted(HERE.rglob("*.json"))
SCENARIOS = {"plain", "rewind", "approval", "continue-as-new-run1", "failure", "mcp",
             "local-failure", "ritual", "rewind-restore", "completion-gate",
             "phases-declared-met", "phases-declared-nothing", "react-gave-up",
             "react-claim-beside-a-failure", "pre-step-files-there", "react-small-profile"}


def test_there_is_a_history_of_each_scenario():
    names = {f.stem for f in HERE.glob("*.json")}
    assert SCENARIOS <= names, SCENARIOS - names
    assert {"react.strategies", "plan-revise-execute-run1.strategies", "nested.strategies",
            "nested-child-1.strategies", "auto.strategies",
            "hostile-steering.hostile", "follow-up-react.follow-up",
            "follow-up-phases.follow-up", "live-stream.live"} <= names
    # one per scenario at the baseline; since it, a patch's own folder, its path recorded
    # (at most one before and one after per strategy it changes)
    assert len(list(HERE.glob("*.json"))) <= 42
    for folder in (d for d in HERE.iterdir() if d.is_dir() and d.name != "__pycache__"):
        assert len(list(folder.glob("*.json"))) <= 4, folder


def patch_ids() -> set[str]:
    """The ids the workflow code passes to `workflow.patched` or `deprecate_patch` (a
    constant of any workflow module, `module.NAME` too)."""
    texts = [path.read_text() for path in (ROOT / "workflows").rglob("*.py")]
    consts = dict(re.findall(r'^(\w+) = "([\w.-]+)"', "\n".join(texts), re.M))
    ids: set[str] = set()
    for text in texts:
        for arg in re.findall(r"(?<!def )(?:patched|deprecate_patch)\(([^)]*)\)", text):
            arg = arg.strip()
            if arg.islower() and arg.isidentifier():  # a parameter, forwarding an id
                continue
            name = arg.rsplit(".", 1)[-1]
            ids.add(arg.strip("\"'") if arg[:1] in "\"'" else consts.get(name, arg))
    return ids


def test_every_patch_has_its_history():
    """A patch made after the baseline comes with a history recorded on its path, in
    tests/histories/<patch id>/ (docs/versioning.md)."""
    for patch in patch_ids():
        folder = HERE / patch
        assert folder.is_dir() and any(folder.glob("*.json")), (
            f"patch '{patch}' has no history in tests/histories/{patch}/")


def test_the_patch_scan_finds_a_patch(tmp_path):
    """The scan itself: a patch id given as a constant is found (so the test above can
    fail)."""
    text = 'NEW = "my-change"\nif workflow.patched(NEW):\n    pass\n'
    consts = dict(re.findall(r'^(\w+) = "([\w.-]+)"', text, re.M))
    found = {consts.get(a.strip(), a) for a in re.findall(r"patched\(([^)]*)\)", text)}
    assert found == {"my-change"}


def payloads(name: str) -> str:
    """Every payload of a history file, decoded (what its activities were given and gave)."""
    def walk(node: object) -> list[str]:
        if isinstance(node, dict):
            found = [base64.b64decode(node["data"]).decode(errors="replace")
                     for k in ("data",) if isinstance(node.get(k), str) and "metadata" in node]
            return found + [t for v in node.values() for t in walk(v)]
        if isinstance(node, list):
            return [t for v in node for t in walk(v)]
        return []
    return "\n".join(walk(json.loads((HERE / name).read_text())))


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
async def test_history_replays(path: Path):
    # the job id the history was recorded under (a nested job names its children by it)
    history = WorkflowHistory.from_json(path.stem.split(".")[0], json.loads(path.read_text()))
    [report] = await replay([history], pydantic_data_converter)
    assert report.ok, report.detail


def local_types(name: str) -> list[str]:
    history = WorkflowHistory.from_json(name, json.loads((HERE / name).read_text()))
    return [t for e in history.events if (t := local_activity(e)) is not None]


def test_the_tool_listing_lists_tools_once():
    for name in ("plain", "mcp"):
        assert local_types(f"{name}.json").count("list_tools") == 1
    for run in (2, 3):  # continued runs carry the resolved config: no second listing
        assert "list_tools" not in local_types(f"continue-as-new-run{run}.json")


def test_the_strategies_set_has_one_job_per_strategy():
    nested = (HERE / "nested.strategies.json").read_text()
    assert nested.count('"startChildWorkflowExecutionInitiatedEventAttributes"') == 2
    child = (HERE / "nested-child-1.strategies.json").read_text()
    assert '"parentWorkflowExecution"' in child
    assert "nested/subjobs/nested-p2-t1" in payloads("nested-child-1.strategies.json")
    for name, tool in (("react", "job_complete"), ("auto", "classify_task"),
                       ("plan-revise-execute-run1", "submit_plan")):
        assert tool in payloads(f"{name}.strategies.json"), name


def test_the_hostile_set_has_the_signals_a_handler_must_survive():
    events = json.loads((HERE / "hostile-steering.hostile.json").read_text())["events"]
    names = [e["workflowExecutionSignaledEventAttributes"]["signalName"] for e in events
             if "workflowExecutionSignaledEventAttributes" in e]
    assert names == ["rewind"] * 4 + ["rewnid", "rewind"]
    assert not any("workflowTaskFailedEventAttributes" in e for e in events)
    assert "workflowExecutionCompletedEventAttributes" in events[-1]


def test_local_tools_are_typed_and_the_restore_runs_once():
    types = set(local_types("plain.json"))
    assert {"tool.write_file", "tool.todo_write"} <= types and "run_tool" not in types
    assert (HERE / "rewind-restore.json").read_text().count('"restore_workspace"') == 1


def test_the_completion_histories_verify_the_deliverables():
    """A job_complete refused while out.md is missing, then taken; a job whose model never
    claims, completed by the workflow with the deliverables it declared and `stuck` without
    them; a claim with confidence 0, `stuck`."""
    assert '"deliverables":["out.md"]' in payloads("completion-gate.json")
    assert "job_incomplete" in payloads("completion-gate.json")
    assert "Completed by the workflow" in payloads("phases-declared-met.json")
    nothing = payloads("phases-declared-nothing.json")
    assert "Completed by the workflow" not in nothing and '"status":"stuck"' in nothing
    assert '"status":"stuck"' in payloads("react-gave-up.json")


def test_the_follow_up_set_has_a_second_turn():
    """follow-up-react: an `instruct` update adding a tool, the tools listed again for turn 2
    (which calls it), a cancel in the wait after it, completed with turn 2's result;
    follow-up-phases: an `instruct` signal, turn 2 re-planned by a strategic phase."""
    events = json.loads((HERE / "follow-up-react.follow-up.json").read_text())["events"]
    kinds = [k for e in events for k in e if k.endswith("EventAttributes")]
    assert "workflowExecutionUpdateAcceptedEventAttributes" in kinds
    assert "workflowExecutionCancelRequestedEventAttributes" in kinds
    assert kinds[-1] == "workflowExecutionCompletedEventAttributes"
    assert local_types("follow-up-react.follow-up.json").count("list_tools") == 2
    text = payloads("follow-up-react.follow-up.json")
    assert '"word_count"' in text and '"summary":"counted"' in text
    events = json.loads((HERE / "follow-up-phases.follow-up.json").read_text())["events"]
    names = [e["workflowExecutionSignaledEventAttributes"]["signalName"] for e in events
             if "workflowExecutionSignaledEventAttributes" in e]
    assert names == ["instruct"]
    text = payloads("follow-up-phases.follow-up.json")
    assert "Also write the gamma notes." in text and '"summary":"turn two"' in text


def test_the_live_history_has_token_batches_and_polls():
    """The live stream in a history (tests/histories/record_live.py): the model's text as
    signals of the stream, a reader's polls as updates - replayed like every other."""
    text = (HERE / "live-stream.live.json").read_text()
    events = json.loads(text)["events"]
    kinds = [e["eventType"] for e in events]
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED" in kinds
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED" in kinds
    assert "__temporal_workflow_stream_publish" in text
    assert "__temporal_workflow_stream_poll" in text
