"""The committed histories of representative jobs replay against the current code.

A change to workflow code that running jobs would see must keep these green by
guarding it with `workflow.patched`; see README "Changing workflow code".
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from operate.replay import replay
from tests.markers import local_activity

FILES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_there_are_histories_of_each_kind():
    """Each scenario from before the local-activity patches, after them, after the tool
    listing (which adds a job calling an MCP server's tool) and after the typed failures
    (which add a failing local-activity tool)."""
    for tag, extra in (("", set()), (".local-ops", set()), (".tool-listing", {"mcp"}),
                       (".typed-failures", {"local-failure"}), (".ritual", {"ritual"}),
                       (".ui-progress", {"mcp", "local-failure", "rewind-restore"}),
                       (".merged", {"mcp", "local-failure", "ritual", "rewind-restore"}),
                       (".todo-files", {"mcp", "local-failure", "ritual", "rewind-restore"}),
                       (".final", {"mcp", "local-failure", "ritual", "rewind-restore",
                                   "completion-gate"}),
                       (".round3", {"mcp", "local-failure", "ritual", "rewind-restore",
                                    "completion-gate", "complete-when-met"}),
                       (".local-calls", {"mcp", "local-failure", "ritual", "rewind-restore",
                                         "completion-gate", "complete-when-met"})):
        names = {f.stem.split("-run")[0] for f in FILES if f.stem.endswith(tag)
                 and (tag or "." not in f.stem) and not f.stem.endswith(".strategies")}
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


def test_the_strategies_set_has_one_job_per_strategy():
    """#16: react, plan_revise_execute (continued as new: a file per run), nested (with its
    child jobs) and auto, each recorded on its own path."""
    names = {f.stem.removesuffix(".strategies") for f in FILES
             if f.stem.endswith(".strategies")}
    assert {"react", "plan-revise-execute-run1", "plan-revise-execute-run2", "nested",
            "nested-child-1", "nested-child-2", "auto"} <= names
    folder = Path(__file__).parent / "histories"
    nested = (folder / "nested.strategies.json").read_text()
    assert nested.count('"startChildWorkflowExecutionInitiatedEventAttributes"') == 2
    child = (folder / "nested-child-1.strategies.json").read_text()
    assert '"parentWorkflowExecution"' in child
    assert "nested/subjobs/nested-p2-t1" in payloads("nested-child-1.strategies.json")
    for name, tool in (("react", "job_complete"), ("auto", "classify_task"),
                       ("plan-revise-execute-run1", "submit_plan")):
        assert tool in payloads(f"{name}.strategies.json"), name


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
    return "\n".join(walk(json.loads((Path(__file__).parent / "histories" / name).read_text())))


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
async def test_history_replays(path: Path):
    # the job id the history was recorded under (a nested job names its children by it)
    history = WorkflowHistory.from_json(path.stem.split(".")[0], json.loads(path.read_text()))
    [report] = await replay([history], pydantic_data_converter)
    assert report.ok, report.detail


def test_the_hostile_set_has_the_signals_a_handler_must_survive():
    """#13: a job sent a rewind that is a number, nested 3,000 deep, a lone surrogate, two
    inputs, and a signal of an unknown name - each listed in `state.rejected`, none failing
    a workflow task - then a good rewind and an approval as an undecoded payload."""
    path = Path(__file__).parent / "histories" / "hostile-steering.hostile.json"
    events = json.loads(path.read_text())["events"]
    names = [e["workflowExecutionSignaledEventAttributes"]["signalName"] for e in events
             if "workflowExecutionSignaledEventAttributes" in e]
    assert names == ["rewind"] * 4 + ["rewnid", "rewind"]
    assert not any("workflowTaskFailedEventAttributes" in e for e in events)
    assert "workflowExecutionCompletedEventAttributes" in events[-1]
    assert "the scope changed" in payloads("hostile-steering.hostile.json")


def local_activity_types(name: str) -> set[str]:
    path = Path(__file__).parent / "histories" / name
    history = WorkflowHistory.from_json(name, json.loads(path.read_text()))
    return {t for e in history.events if (t := local_activity(e)) is not None}


@pytest.mark.parametrize("patch", ["ui-progress", "tool-activity-types"])
def test_the_ui_progress_histories_take_the_patched_paths(patch: str):
    """#15: memo and search attributes at step boundaries, local tool calls typed
    `tool.<name>`; the older sets keep their upserts and `run_tool`."""
    assert patch in patches("plain.ui-progress.json")
    assert patch not in patches("plain.typed-failures.json")
    assert {"tool.write_file", "tool.todo_write"} <= local_activity_types(
        "plain.ui-progress.json")
    assert "run_tool" not in local_activity_types("plain.ui-progress.json")
    assert "run_tool" in local_activity_types("plain.typed-failures.json")


def test_the_merged_histories_take_every_branch_s_paths():
    """The set recorded on main after #13, #15, #16 and #17 met (`record merged`): one job
    takes the ritual's, the UI's and the typed failures' patched paths together."""
    assert {"todo-evidence", "ui-progress", "tool-activity-types"} <= patches("plain.merged.json")
    assert "typed-failures" in patches("local-failure.merged.json")
    assert "job-complete-last" in patches("ritual.merged.json")
    assert "rewind-restore" in patches("rewind-restore.merged.json")


def test_the_todo_files_histories_check_and_complete_todos_by_their_files():
    """#17, second round: a tactical todo's named files must exist before todo_complete, and
    a turn that wrote a todo's files completes it (`record todo-files`)."""
    assert {"todo-named-files", "todo-auto-complete"} <= patches("ritual.todo-files.json")
    assert "todo-auto-complete" not in patches("plain.todo-files.json")  # asked when needed
    assert "todo-named-files" not in patches("ritual.merged.json")
    text = (Path(__file__).parent / "histories" / "ritual.todo-files.json").read_text()
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in text


def test_the_final_histories_take_every_patched_path_of_this_round():
    """Recorded on main after #17's second round and #18's branches met (`record final`):
    a job's start as local activities, a model's todo checked and completed by its files,
    job_complete refused by the completion gate and the transition told of its files."""
    assert "local-start" in patches("plain.final.json")
    assert {"todo-named-files", "todo-auto-complete"} <= patches("ritual.final.json")
    assert {"completion-gate", "completion-at-transition"} <= patches(
        "completion-gate.final.json")
    text = (Path(__file__).parent / "histories" / "completion-gate.final.json").read_text()
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in text


def test_the_round3_history_is_completed_by_the_workflow():
    """#17, third round: the tactical phase ends with the deliverables in place and the
    workflow completes the job (`complete-when-met`) without a transition phase."""
    assert {"complete-when-met", "todo-write-checked"} <= patches(
        "complete-when-met.round3.json")
    assert "complete-when-met" not in patches("completion-gate.round3.json")  # not configured
    text = (Path(__file__).parent / "histories" / "complete-when-met.round3.json").read_text()
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in text  # payloads are encoded


def test_a_react_job_that_stops_calling_tools_is_checked():
    assert "quiet-end-gated" in patches("react-quiet-end.quiet-end.json")
    text = (Path(__file__).parent / "histories" / "react-quiet-end.quiet-end.json").read_text()
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in text


def test_two_calls_by_turns_are_stopped():
    assert "repetition-cycles" in patches("two-calls-by-turns.cycles.json")
    assert "repetition-cycles" not in patches("react-quiet-end.quiet-end.json")


def test_a_rewind_phase_is_told_what_is_missing():
    assert {"completion-at-rewind", "completion-at-transition"} <= patches(
        "rewind-deliverables.at-rewind.json")


def test_a_todo_is_held_to_its_files_lines():
    assert "todo-expected-lines" in patches("todo-expected-lines.todo-lines.json")


def test_the_restoring_rewind_history_restores_once():
    assert "rewind-restore" in patches("rewind-restore.ui-progress.json")
    text = (Path(__file__).parent / "histories" / "rewind-restore.ui-progress.json").read_text()
    assert text.count('"restore_workspace"') == 1


def test_a_strategic_write_of_another_file_is_refused():
    """#17, fourth round: asked for main_plan.md, the model wrote output/summary.md; the write
    is refused (`off-todo-writes`). The `cycles` history (recorded before) took the same
    turn, ran the write, and replays without the patch."""
    assert "off-todo-writes" in patches("off-todo-write.off-todo.json")
    assert "off-todo-writes" not in patches("two-calls-by-turns.cycles.json")
    text = (Path(__file__).parent / "histories" / "off-todo-write.off-todo.json").read_text()
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in text


def test_a_rewrite_of_a_done_todos_file_is_refused():
    """#17, fifth round: asked for main_plan.md, the model rewrote workspace.md (its todo
    done); the rewrite is refused (`off-todo-planning-writes`), and the config holds an
    expected line given by its glob. The `off-todo` history, recorded before, replays
    without the patch."""
    assert "off-todo-planning-writes" in patches("done-todo-rewrite.rewrite.json")
    assert "off-todo-planning-writes" not in patches("off-todo-write.off-todo.json")
    text = (Path(__file__).parent / "histories" / "done-todo-rewrite.rewrite.json").read_text()
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in text


def test_a_strategic_phase_refused_three_times_ends_in_the_workflows_plan():
    """#17, sixth round: a bootstrap whose todo_write copies the bootstrap's todos three
    times ends with the workflow's plan of the deliverable (`plan-by-workflow`); its first
    write lacks the heading and the check returns the file mended. Every history recorded
    before replays without the patch."""
    assert "plan-by-workflow" in patches("planned-by-workflow.planned.json")
    older = [p.name for p in (Path(__file__).parent / "histories").glob("*.json")
             if not p.name.startswith(("planned-by-workflow", "todo-restated"))]
    assert older and not any("plan-by-workflow" in patches(n) for n in older)
    path = Path(__file__).parent / "histories" / "planned-by-workflow.planned.json"
    assert '"mends":{"notes/apples.md":"# Apples\\nApples are red.\\n"}' in payloads(
        "planned-by-workflow.planned.json")
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in path.read_text()



def test_a_todo_short_of_its_lines_is_restated_as_the_mended_write():
    """#17, sixth round: the same job, its todo restated as the mended write once the check
    returns it (`todo-restated`: the todo's words feed the page's memo, so it is patched);
    the `planned` history, recorded before, replays without it."""
    assert "todo-restated" in patches("todo-restated.restated.json")
    assert "todo-restated" not in patches("planned-by-workflow.planned.json")
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in (
        Path(__file__).parent / "histories" / "todo-restated.restated.json").read_text()


def assert_only_in(patch: str, name: str) -> None:
    """History `name` takes `patch` and completes; every other history replays without it."""
    assert patch in patches(name)
    older = [p.name for p in (Path(__file__).parent / "histories").glob("*.json")
             if p.name != name]
    assert older and not any(patch in patches(n) for n in older)
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in (
        Path(__file__).parent / "histories" / name).read_text()


def test_a_plan_naming_no_deliverable_and_a_write_of_todos_yaml_are_refused():
    """#17, seventh round: a bootstrap whose todo_write names no deliverable and whose
    write_file of todos.yaml are refused, each with the plan of the deliverable shown, then
    the plan the model copies is taken (`deliverables-plan`). Every history recorded before
    replays without the patch."""
    assert_only_in("deliverables-plan", "deliverables-plan.deliverables.json")


def test_a_todo_whose_file_lacks_a_sentence_is_restated_as_its_lines():
    """#17, seventh round: a todo whose file lacks a line no mend can put in is restated as
    the lines its file must hold (`todo-restated-lines`); every history recorded before
    replays without the patch."""
    assert_only_in("todo-restated-lines", "todo-restated-lines.lines.json")


def test_a_react_job_whose_model_stops_calling_tools_tries_again():
    """#17, seventh round: a react job whose model stops calling tools with its files short
    starts a fresh attempt (`react-quiet-retry`); the `quiet-end` history, recorded before,
    replays without it and ends `stuck`."""
    assert_only_in("react-quiet-retry", "react-quiet-retry.quiet-retry.json")
    assert "react_0002" in payloads("react-quiet-retry.quiet-retry.json")


def test_the_local_calls_histories_run_fast_model_calls_as_local_activities():
    """#18: every scenario again with a fast endpoint's model calls as local activities
    (`local-model-calls`: the rewind signal, the approval, continue-as-new, the failure...
    arrive in the workflow tasks a chain of local calls ends with); no older history takes
    the patch, and each replays without it."""
    mine = [p.name for p in (Path(__file__).parent / "histories").glob("*.local-calls.json")]
    assert len(mine) >= 12
    for name in mine:
        assert "local-model-calls" in patches(name), name
    older = [p.name for p in (Path(__file__).parent / "histories").glob("*.json")
             if p.name not in mine]
    assert not any("local-model-calls" in patches(n) for n in older)
    assert local_model_calls("plain.local-calls.json") >= 3
    assert local_model_calls("plain.round3.json") == 0


def local_model_calls(name: str) -> int:
    """How many model calls of history `name` ran as local activities."""
    path = Path(__file__).parent / "histories" / name
    history = WorkflowHistory.from_json(name, json.loads(path.read_text()))
    return sum(local_activity(e) == "call_model" for e in history.events)
