"""The BFCL tools run as a switchback worker runs them (`Tool.invoke`, arguments validated
from their JSON as the model sends them) on an in-memory workspace, scored with BFCL's own
checker. Needs bfcl-eval installed (`pip install --no-deps bfcl-eval==2026.3.23 mpmath
filelock`) and this package (`pip install -e examples/bfcl`); `make` installs both."""

from __future__ import annotations

import ast
import asyncio
import copy
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from functools import cache
from importlib.metadata import entry_points, version
from pathlib import Path
from typing import Any

import pytest
from bfcl_eval.constants.enums import ModelStyle  # type: ignore[import-untyped]  # noqa: E402

import switchback_bfcl as bfcl  # noqa: E402
from switchback import Limits, ToolContext, ToolError  # noqa: E402
from switchback_bfcl import _bfcl, cases, state  # noqa: E402
from switchback_bfcl.tools import SCHEMAS, TOOLS, TOOLS_BY_NAME, hinted  # noqa: E402

PACKAGE = Path(__file__).parents[1]
BFCL_EVAL = "2026.3.23"  # the version pyproject.toml and the README name


class MemoryFiles:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    async def read_text(self, path: str) -> str:
        if path not in self.files:
            raise ToolError("file_not_found", f"'{path}' does not exist")
        return self.files[path]

    async def read_optional(self, path: str) -> str | None:
        return self.files.get(path)

    async def write_text(self, path: str, text: str, max_bytes: int | None = None) -> str:
        self.files[path] = text
        return path


def context(files: dict[str, str], key: str = "") -> ToolContext:
    return ToolContext(files=MemoryFiles(files),  # type: ignore[arg-type]
                       limits=Limits(max_file_bytes=1 << 24, read_max_chars=1 << 20,
                                     max_result_chars=1 << 20), job_id="job-1",
                       idempotency_key=key)


def as_model_call(call: str) -> tuple[str, str]:
    """A ground-truth call string as a model sends it: (name, the arguments as JSON)."""
    name, args = state.call_arguments(call)
    return name, json.dumps(args)


async def run_call(files: dict[str, str], name: str, raw: str, key: str = "") -> str:
    """One call as a worker runs it: the arguments validated from the model's JSON, then
    `Tool.invoke` with the job's workspace."""
    tool = TOOLS_BY_NAME[name]
    out = await tool.invoke(context(files, key), tool.args.model_validate_json(raw))
    return out.text


def follow_up(text: str, turn: int) -> str:
    """What the engine appends to instructions.md when a job takes a follow-up instruction
    (workflows/workspace_ops.py, append_instruction); `turn` is the job's 1-based turn."""
    from switchback.workflows.contract import layout

    return f"\n\n{layout.FOLLOW_UP_HEADING}{turn})\n\n{text}\n"


def job_files(case: dict[str, Any]) -> dict[str, str]:
    """A job's workspace as the engine lays its input out: the case document under
    documents/, the first user turn as instructions.md."""
    [doc] = bfcl.job_documents(case)
    return {f"documents/{doc['name']}": doc["text"],
            bfcl.INSTRUCTIONS_PATH: bfcl.turn_text(case, 0) + "\n"}


def at_turn(files: dict[str, str], case: dict[str, Any], turn: int) -> None:
    """The follow-up instructions up to BFCL turn `turn` (0-based) taken, as the engine
    appends them."""
    while (n := bfcl.turn_of(files[bfcl.INSTRUCTIONS_PATH])) < turn:
        files[bfcl.INSTRUCTIONS_PATH] += follow_up(bfcl.turn_text(case, n + 1), n + 2)


async def replay(case: dict[str, Any], turns: list[list[str]]) -> dict[str, str]:
    """Run `turns` (call strings per turn) through the tools, turn by turn as a job does:
    its input's files first, each later user turn a follow-up instruction."""
    files = job_files(case)
    for turn, calls in enumerate(turns):
        at_turn(files, case, turn)
        for call in calls:
            await run_call(files, *as_model_call(call))
    return files


# -- (1) the ground truth of every base case, through the tools and BFCL's checker ------

async def test_the_ground_truth_of_every_base_case_is_valid() -> None:
    started = time.monotonic()
    base = cases.load_cases("base")
    assert len(base) == 200
    invalid = {}
    for case in base:
        truth = cases.ground_truth(case["id"])
        files = await replay(case, truth)
        recorded = state.Record.parse(files[state.CALLS_PATH]).turns
        assert [len(t) for t in recorded] == [len(t) for t in truth][:len(recorded)]
        result = bfcl.check_files(files)
        if not result.valid:
            invalid[case["id"]] = result.error
    assert not invalid, f"{len(invalid)} invalid: {list(invalid)[:5]}"
    print(f"200 base cases replayed and checked in {time.monotonic() - started:.1f} s")


@pytest.mark.parametrize("category", ["long_context", "miss_func", "miss_param"])
async def test_the_ground_truth_of_other_categories_is_valid(category: str) -> None:
    for case in cases.load_cases(category)[:: 40]:  # 5 cases each
        files = await replay(case, cases.ground_truth(case["id"]))
        assert bfcl.check_files(files).valid, case["id"]


# -- (2) a wrong run is invalid ------------------------------------------------------------

async def test_a_wrong_call_sequence_is_invalid() -> None:
    case = cases.load_case("multi_turn_base_0")
    truth = cases.ground_truth(case["id"])
    assert truth[0] == ["cd(folder='document')", "mkdir(dir_name='temp')",
                        "mv(source='final_report.pdf', destination='temp')"]

    changed = copy.deepcopy(truth)
    changed[0][1] = "mkdir(dir_name='tmp')"
    result = bfcl.check_files(await replay(case, changed))
    assert not result.valid and result.error is not None
    assert result.error["error_type"] == "multi_turn:instance_state_mismatch"

    dropped = copy.deepcopy(truth)
    dropped[3] = []
    result = bfcl.check_files(await replay(case, dropped))
    assert not result.valid and result.error is not None
    assert result.error["error_type"] == "multi_turn:empty_turn_model_response"

    result = bfcl.check_files(await replay(case, truth[:3]))  # the run stopped a turn early
    assert not result.valid and result.error is not None
    assert result.error["error_type"] == "multi_turn:force_terminated"

    assert bfcl.check_files(await replay(case, truth)).valid


def test_turns_right_counts_the_turns_before_the_first_wrong_one() -> None:
    from switchback_bfcl.check import turns_right
    truth = cases.ground_truth("multi_turn_base_0")
    assert len(truth) == 4 and turns_right("multi_turn_base_0", truth) == 4
    late = copy.deepcopy(truth)
    late[2] = ["pwd()"]  # turn 3 wrong: turns 1 and 2 right, turn 4 does not count
    assert turns_right("multi_turn_base_0", late) == 2
    early = copy.deepcopy(truth)
    early[0][1] = "mkdir(dir_name='tmp')"
    assert turns_right("multi_turn_base_0", early) == 0
    assert turns_right("multi_turn_base_0", truth[:2]) == 2  # stopped after turn 2
    assert turns_right("multi_turn_base_0", []) == 0
    smuggled = [truth[0], ["__import__('os').system('touch /tmp/pwned')"]]
    assert turns_right("multi_turn_base_0", smuggled) == 1  # not evaluated: the turn is wrong


# -- (3) the state is the workspace's: a fresh process goes on from the files alone --------

RESTARTED_WORKER = """
import asyncio, json, sys
from switchback import Limits, ToolContext
from switchback_bfcl.tools import TOOLS_BY_NAME

class Files:
    def __init__(self, files): self.files = files
    async def read_optional(self, path): return self.files.get(path)
    async def write_text(self, path, text, max_bytes=None):
        self.files[path] = text
        return path

path, name, raw = sys.argv[1:]
files = json.loads(open(path).read())
ctx = ToolContext(files=Files(files), limits=Limits(1 << 24, 1 << 20, 1 << 20), job_id="job-1")
tool = TOOLS_BY_NAME[name]
out = asyncio.run(tool.invoke(ctx, tool.args.model_validate_json(raw)))
open(path, "w").write(json.dumps(files))
print(json.dumps(out.text))
"""


async def test_the_state_survives_a_worker_restart(tmp_path: Path) -> None:
    case = cases.load_case("multi_turn_base_0")  # the file system's tree and current folder
    truth = cases.ground_truth(case["id"])
    calls = [(turn, as_model_call(c)) for turn, t in enumerate(truth) for c in t]
    uninterrupted, answers = job_files(case), []
    for turn, (name, raw) in calls:
        at_turn(uninterrupted, case, turn)
        answers.append(await run_call(uninterrupted, name, raw))

    files = job_files(case)
    snapshot = tmp_path / "workspace.json"
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path / "bfcl"),
           "PYTHONPATH": os.pathsep.join([str(PACKAGE.parents[1]),
                                          os.environ.get("PYTHONPATH", "")])}
    for i, (turn, (name, raw)) in enumerate(calls):
        at_turn(files, case, turn)
        if i in (4, 5):  # 'grep' in turn 1 and 'sort' in turn 2 by a process of their own
            snapshot.write_text(json.dumps(files))
            done = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-c", RESTARTED_WORKER, str(snapshot), name,
                                 raw], capture_output=True, text=True, env=env, timeout=120)
            assert done.returncode == 0, done.stderr
            answer = json.loads(done.stdout)
            files = json.loads(snapshot.read_text())
        else:
            answer = await run_call(files, name, raw)
        assert answer == answers[i], calls[i]
    assert files == uninterrupted
    assert bfcl.check_files(files).valid
    assert [c[1][0] for c in calls[4:6]] == ["grep", "sort"]
    assert not any("Error" in a for a in answers[4:6])


async def test_a_retried_call_that_was_recorded_is_not_run_again() -> None:
    case = cases.load_case("multi_turn_base_0")
    files = job_files(case)
    first = await run_call(files, "mkdir", '{"dir_name": "temp"}', key="call-1")
    again = await run_call(files, "mkdir", '{"dir_name": "temp"}', key="call-1")  # a retry
    other = await run_call(files, "mkdir", '{"dir_name": "temp"}', key="call-2")  # a new call
    assert first == again == "None"
    assert "File exists" in other
    assert state.Record.parse(files[state.CALLS_PATH]).turns == [
        ["mkdir(dir_name='temp')", "mkdir(dir_name='temp')"]]


# -- what BFCL answers, and what reaches its eval ------------------------------------------

async def test_results_and_errors_are_bfcls() -> None:
    case = cases.load_case("multi_turn_base_0")
    files = job_files(case)
    assert json.loads(await run_call(files, "cd", '{"folder": "document"}')) == {
        "current_working_directory": "document"}
    assert await run_call(files, "cd", "{}") == (
        "Error during execution: GorillaFileSystem.cd() missing 1 required positional "
        "argument: 'folder'")
    assert await run_call(files, "cd", '{"folder": "nowhere"}') == json.dumps(
        {"error": "cd: 'nowhere': No such file or directory"})
    # a function of a class the case does not involve: BFCL's executor does not know it
    assert await run_call(files, "add", '{"a": 1, "b": 2}') == (
        "Error during execution: name 'add' is not defined")
    assert state.Record.parse(files[state.CALLS_PATH]).turns == [
        ["cd(folder='document')", "cd()", "cd(folder='nowhere')", "add(a=1,b=2)"]]


async def test_workspace_files_are_checked_before_bfcls_eval() -> None:
    case = cases.load_case("multi_turn_base_0")
    with pytest.raises(ToolError) as e:
        await run_call({}, "pwd", "{}")
    assert e.value.code == "no_bfcl_case"

    files = job_files(case)
    files[state.CALLS_PATH] = json.dumps(
        {"turns": [["cd(folder=__import__('os').system('touch /tmp/pwned'))"]]})
    with pytest.raises(ToolError) as e:
        await run_call(files, "pwd", "{}")
    assert e.value.code == "bad_bfcl_state" and "not a literal" in str(e.value)

    files = job_files(case)
    files[state.CALLS_PATH] = json.dumps({"turns": [["open('/etc/passwd')"]]})
    with pytest.raises(ToolError, match="not a call of a BFCL function"):
        await run_call(files, "pwd", "{}")

    for bad, why in (({"id": "x);__import__('os').getcwd(); (y"}, "'id' must be a case id"),
                     ({"id": "multi_turn_base_9999"}, "multi_turn_base_9999"),
                     ({"id": "multi_turn_composite_0"}, "multi-turn categories"),
                     (["multi_turn_base_0"], "'id' must be a case id")):
        files = job_files(case)
        files[state.CASE_PATH] = json.dumps(bad)
        with pytest.raises(ToolError, match=re.escape(why)):
            await run_call(files, "pwd", "{}")
        with pytest.raises(state.StateError):
            bfcl.check_files(files)

    files = job_files(case)  # an argument name that would smuggle code into the call
    with pytest.raises(ToolError, match="is not a parameter name"):
        await run_call(files, "cd", json.dumps({"folder=__import__('os').getcwd(),x": 1}))
    assert state.Record.parse(files.get(state.CALLS_PATH)).turns == []

    record = {"turns": [["cd(folder='document')"], ["__import__('os')"]]}
    result = bfcl.check_calls("multi_turn_base_0", record["turns"] + [[], []])
    assert not result.valid and result.error is not None
    assert result.error["error_type"] == "switchback:bad_call_record"


async def test_the_case_and_its_state_come_from_bfcl_eval_by_id() -> None:
    """The document names the case; what else it holds is ignored: the initial state is
    bfcl-eval's, as the checker's is (and no file shows it to the model)."""
    case = cases.load_case("multi_turn_base_0")
    assert bfcl.job_documents(case) == [{"name": "bfcl_case.json",
                                         "text": '{"id": "multi_turn_base_0"}'}]
    plain, forged = job_files(case), job_files(case)
    forged[state.CASE_PATH] = json.dumps({
        "id": "multi_turn_base_0", "involved_classes": ["MathAPI"],
        "initial_config": {"GorillaFileSystem": {"root": {"forged": {"type": "directory",
                                                                    "contents": {}}}}}})
    assert await run_call(plain, "ls", "{}") == await run_call(forged, "ls", "{}")
    assert "forged" not in await run_call(forged, "ls", "{}")


def test_the_turn_is_the_number_of_follow_up_instructions() -> None:
    case = cases.load_case("multi_turn_base_0")
    files = job_files(case)
    assert bfcl.turn_of(None) == bfcl.turn_of(files[bfcl.INSTRUCTIONS_PATH]) == 0
    for turn in range(1, len(case["question"])):
        at_turn(files, case, turn)
        assert bfcl.turn_of(files[bfcl.INSTRUCTIONS_PATH]) == turn
    assert files[bfcl.INSTRUCTIONS_PATH].count("## Follow-up instruction") == 3
    with pytest.raises(state.StateError, match="numbered"):  # not as the engine writes them
        bfcl.turn_of("task\n\n## Follow-up instruction (turn 3)\n\nmore\n")
    # the engine's heading, as workflows/workspace_ops.py writes it (layout.FOLLOW_UP_HEADING)
    from switchback.workflows.contract import layout
    written = f"\n\n{layout.FOLLOW_UP_HEADING}2)\n\nmore\n"
    assert bfcl.turn_of(f"task{written}") == 1


# -- (4) the tool schemas are the ones BFCL gives a function-calling model -----------------

@cache
def bfcl_conversions() -> dict[str, Any]:
    """BFCL's `convert_to_tool`, `_cast_to_openai_type` and `convert_to_function_call`,
    compiled from bfcl-eval's source (their module needs tree-sitter to import)."""
    spec = importlib.util.find_spec("bfcl_eval.model_handler.utils")
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text()
    wanted = {"convert_to_tool", "_cast_to_openai_type", "convert_to_function_call"}
    body: list[ast.stmt] = [n for n in ast.parse(source).body
                            if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert {n.name for n in body if isinstance(n, ast.FunctionDef)} == wanted
    space: dict[str, Any] = {"copy": copy, "json": json, "re": re, "ModelStyle": ModelStyle,
                             "GORILLA_TO_OPENAPI": _bfcl.GORILLA_TO_OPENAPI}
    exec(compile(ast.Module(body=body, type_ignores=[]), spec.origin, "exec"), space)
    return space


def bfcl_tools(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = bfcl_conversions()["convert_to_tool"](
        docs, _bfcl.GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)
    return tools


@cache
def as_openai(name: str) -> dict[str, Any]:
    """What switchback sends for a tool: its description and its argument model's schema."""
    tool = TOOLS_BY_NAME[name]
    return {"name": name, "description": tool.description,
            "parameters": tool.args.model_json_schema()}


def test_the_tool_schemas_are_bfcls() -> None:
    docs = [d for c in _bfcl.CLASSES for d in cases.function_docs(c)]
    assert len(TOOLS) == len(docs) == 128
    assert [t.name for t in TOOLS] == [d["name"] for d in docs]
    expected = bfcl_tools(hinted(docs))
    assert list(SCHEMAS.values()) == expected
    for schema in expected:
        function = schema["function"]
        assert as_openai(function["name"]) == {k: function[k] for k in
                                               ("name", "description", "parameters")}
    # what BFCL's generation step offers in each base case's first turn, in its order
    for case in cases.load_cases("base"):
        names = cases.tool_names(case, 0)
        offered = [{k: t["function"][k] for k in ("name", "description", "parameters")}
                   for t in bfcl_tools(case["function"])]
        assert [as_openai(n) for n in names] == offered, case["id"]


def test_calls_are_recorded_as_bfcls_convert_to_function_call_writes_them() -> None:
    convert = bfcl_conversions()["convert_to_function_call"]
    samples: list[tuple[str, dict[str, Any]]] = [
        ("cd", {"folder": "document"}), ("mean", {"numbers": [1, 2.5, -3]}),
        ("echo", {"content": "it's \"quoted\"\n", "file_name": "a.txt"}), ("pwd", {}),
        ("create_ticket", {"title": "t", "description": "d", "priority": 4}),
        ("set_navigation", {"destination": "Ünïcode Str, 1"}),
        ("place_order", {"order_type": "Buy", "symbol": "AAPL", "price": 150.0, "amount": 10})]
    for name, args in samples:
        assert [state.call_string(name, args)] == convert({name: json.dumps(args)})


def test_function_names_cannot_reach_anything_else_in_bfcls_eval() -> None:
    import builtins
    names = state.known_functions()
    assert len(names) == 128
    assert not names & set(dir(builtins)) and not names & set(vars(_bfcl.multi_turn_utils))


# -- (5) miss_func and miss_param ----------------------------------------------------------

def test_miss_func_withholds_the_function_until_its_turn() -> None:
    miss_func = cases.load_cases("miss_func")
    assert len(miss_func) == 200 and all(c.get("missed_function") for c in miss_func)
    case = cases.load_case("multi_turn_miss_func_0")
    [(at, missed)] = case["missed_function"].items()
    at, missed_names = int(at), [d["name"] for d in missed]
    assert (at, missed_names) == (3, ["sort"])
    for turn in range(len(case["question"])):
        offered = cases.tool_names(case, turn)
        assert ("sort" in offered) == (turn >= at)
        assert set(offered) <= {t.name for t in TOOLS}
    assert cases.turn_messages(case, at) == [
        {"role": "user", "content": _bfcl.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC}]
    assert cases.turn_messages(case, 0) == case["question"][0]
    # BFCL adds the withheld doc as is; every other doc carries its Python hint
    assert not missed[0]["description"].endswith("Python 3 syntax.")
    assert all(d["description"].endswith("Python 3 syntax.") for d in case["function"])


def test_miss_param_loads() -> None:
    miss_param = cases.load_cases("miss_param")
    assert len(miss_param) == 200
    truths = [cases.ground_truth(c["id"]) for c in miss_param]
    assert all(len(t) == len(c["question"]) for t, c in zip(truths, miss_param, strict=True))
    assert all(any(not turn for turn in t) for t in truths)  # the turn that lacks a parameter
    with pytest.raises(KeyError):
        cases.load_case("multi_turn_composite_0")


# -- packaging -----------------------------------------------------------------------------

def test_the_entry_point_is_declared_and_loads() -> None:
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["switchback.tools"] == {
        "bfcl": "switchback_bfcl.tools:TOOLS"}
    found = [ep for ep in entry_points(group="switchback.tools") if ep.name == "bfcl"]
    assert found, "switchback-bfcl is not installed (make installs it)"
    assert found[0].load() is TOOLS


def test_the_pinned_bfcl_eval_is_installed() -> None:
    assert version("bfcl-eval") == BFCL_EVAL
    assert f"bfcl-eval=={BFCL_EVAL}" in (PACKAGE / "README.md").read_text()
    assert f"bfcl-eval=={BFCL_EVAL}" in (PACKAGE / "pyproject.toml").read_text()
