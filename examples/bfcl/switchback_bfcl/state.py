"""A BFCL case's API state in the job's workspace, and running calls on it BFCL's way.

A job needs nothing but its input; the tools read three workspace files:

- `documents/bfcl_case.json` - the job input's inline document (`job_documents(case)`):
  `{"id": "multi_turn_base_0"}`, the case to run. The case itself (`involved_classes`,
  `initial_config`) comes from the installed bfcl-eval by that id, as the checker's does: the
  model never sees BFCL's initial state in a file, and the document can name nothing else;
- `instructions.md` - the engine's (read-only to tools): the first user turn, then one
  `## Follow-up instruction (turn N)` section per follow-up instruction the job took, so the
  BFCL turn being answered (0-based) is the number of those headings (`turn_of`);
- `bfcl/calls.json` - written by the tools: every call executed so far, per turn, in BFCL's
  call-string form (`{"turns": [["cd(folder='document')", ...], ...]}`), and the last
  call's idempotency key and result.

The state of the API objects is not serialised: it is the case's `initial_config` plus the
calls executed so far. A call rebuilds the objects with BFCL's own executor
(`execute_multi_turn_func_call`: `_load_scenario(initial_config)`, then every recorded call
in order, then the new one) and appends the new call to `calls.json` - one write, the
commit point. That is how BFCL's checker derives the state it compares, so the tools'
state is the checker's by construction, including what JSON of the attributes would lose
(the file system's tree and current directory, the random generators the classes draw
booking and message ids from, the long-context additions made at load). A worker killed
at any point loses nothing: before the write the call did not happen, after it it did; a
retry of a call that was recorded (same idempotency key as the last record) answers the
recorded result instead of running it again.

Everything read from the workspace is checked before BFCL's executor `eval`s it: a call
must be one call of a known BFCL function with literal arguments, the case id a plain
name of a case bfcl-eval has.
"""

from __future__ import annotations

import ast
import functools
import json
import keyword
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from switchback_bfcl import _bfcl, cases

CASE_DOCUMENT = "bfcl_case.json"  # the job input's inline document
CASE_PATH = f"documents/{CASE_DOCUMENT}"  # where the engine puts it
INSTRUCTIONS_PATH = "instructions.md"  # the engine's; read-only to tools
CALLS_PATH = "bfcl/calls.json"
# the heading the engine puts above each follow-up instruction it appends to instructions.md
# (workflows/workspace_ops.py, append_instruction)
FOLLOW_UP = re.compile(r"^## Follow-up instruction \(turn (\d{1,6})\)[ \t]*$", re.MULTILINE)

CASE_ID = re.compile(r"[A-Za-z0-9_]{1,200}")
# BFCL's executor keeps its API objects in its module's globals and `eval`s calls there;
# one execution (or check) at a time per process keeps runs apart (they take milliseconds)
LOCK = threading.Lock()


class StateError(ValueError):
    """A workspace file that is not what the engine, the runner and the tools write."""


def case_document(case: Mapping[str, Any]) -> dict[str, str]:
    """The inline document that names the case a job runs (`documents/bfcl_case.json`): a
    job input `documents` entry, `{"name": "bfcl_case.json", "text": '{"id": ...}'}`."""
    text = json.dumps({"id": case["id"]})
    read_case(text)  # a case bfcl-eval has
    return {"name": CASE_DOCUMENT, "text": text}


def job_documents(case: Mapping[str, Any]) -> list[dict[str, str]]:
    """The job input's `documents` for a case: all a job needs besides its instructions."""
    return [case_document(case)]


def read_case(text: str | None) -> dict[str, Any]:
    """The BFCL case `documents/bfcl_case.json` names, as bfcl-eval has it (`id`,
    `involved_classes`, `initial_config`, ...): only the id is taken from the workspace."""
    if text is None:
        raise StateError(f"the workspace has no BFCL case ({CASE_PATH}; a runner gives it as "
                         "an inline document: switchback_bfcl.job_documents(case))")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise StateError(f'{CASE_PATH} must be {{"id": "<case id>"}}') from e
    case_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(case_id, str) or not CASE_ID.fullmatch(case_id):
        raise StateError(f"{CASE_PATH}: 'id' must be a case id such as 'multi_turn_base_0'")
    try:
        case = cases.load_case(case_id)
    except KeyError as e:
        raise StateError(f"{CASE_PATH}: {e.args[0]}") from e
    return validate_case(case)


def validate_case(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise StateError("a BFCL case must be a JSON object")
    case_id, classes, config = (data.get("id"), data.get("involved_classes"),
                                data.get("initial_config", {}))
    if not isinstance(case_id, str) or not CASE_ID.fullmatch(case_id):
        raise StateError("a BFCL case's 'id' must be a case id such as 'multi_turn_base_0'")
    if (not isinstance(classes, list) or not classes
            or not all(isinstance(c, str) and c in _bfcl.CLASSES for c in classes)):
        raise StateError(f"a BFCL case's 'involved_classes' must list some of "
                         f"{', '.join(_bfcl.CLASSES)}")
    if not isinstance(config, dict) or not all(isinstance(v, dict) for v in config.values()):
        raise StateError("a BFCL case's 'initial_config' must map class names to objects")
    return data


def turn_of(instructions: str | None) -> int:
    """The BFCL turn (0-based) a job is answering: the number of follow-up instructions the
    engine appended to instructions.md (`## Follow-up instruction (turn 2)`, `(turn 3)`, ...,
    in order); 0 without the file."""
    if instructions is None:
        return 0
    numbers = [int(n) for n in FOLLOW_UP.findall(instructions)]
    if numbers != list(range(2, len(numbers) + 2)):
        raise StateError(f"{INSTRUCTIONS_PATH}: the follow-up headings are numbered "
                         f"{numbers[:10]}, not 2, 3, ... in order")
    return len(numbers)


@dataclass
class Record:
    """`bfcl/calls.json`: the calls per turn and the last call's key and result."""

    turns: list[list[str]] = field(default_factory=list)
    last_key: str = ""
    last_result: str = ""

    @classmethod
    def parse(cls, text: str | None) -> Record:
        if text is None:
            return cls()
        try:
            data = json.loads(text)
            turns, last = data["turns"], data.get("last") or {}
            if not (isinstance(turns, list) and all(
                    isinstance(t, list) and all(isinstance(c, str) for c in t) for t in turns)):
                raise TypeError("turns")
            return cls(turns, str(last.get("key", "")), str(last.get("result", "")))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise StateError(f'{CALLS_PATH} must be {{"turns": [[call, ...], ...]}}') from e

    def calls(self) -> list[str]:
        return [c for turn in self.turns for c in turn]

    def add(self, turn: int, call: str, key: str, result: str) -> None:
        while len(self.turns) <= turn:
            self.turns.append([])
        self.turns[turn].append(call)
        self.last_key, self.last_result = key, result

    def dump(self) -> str:
        data: dict[str, Any] = {"turns": self.turns}
        if self.last_key:
            data["last"] = {"key": self.last_key, "result": self.last_result}
        return json.dumps(data, ensure_ascii=False, indent=1)


@functools.cache
def known_functions() -> frozenset[str]:
    """The function names of the eight API classes (their docs)."""
    return frozenset(doc["name"] for c in _bfcl.CLASSES for doc in cases.function_docs(c))


@functools.cache
def parameter_names() -> dict[str, list[str]]:
    """Each BFCL function's parameters in order (some ground truth passes them by position)."""
    import importlib
    import inspect

    out = {}
    for name in _bfcl.CLASSES:
        cls = getattr(importlib.import_module(_bfcl.CLASS_FILE_PATH_MAPPING[name]), name)
        for method, fn in inspect.getmembers(cls, inspect.isfunction):
            if not method.startswith("_"):
                out[method] = [p for p in inspect.signature(fn).parameters if p != "self"]
    return out


def call_arguments(text: str) -> tuple[str, dict[str, Any]]:
    """A call string (ground truth) as a model sends it: its function and the arguments by
    parameter name (`parse_call` checks it first)."""
    name = parse_call(text)
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.Call)
    args = {parameter_names()[name][i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return name, args


def call_string(name: str, arguments: Mapping[str, Any]) -> str:
    """A call in BFCL's form, as BFCL's `convert_to_function_call` writes a function-calling
    model's call: `name(k=repr(v),...)`, the arguments as the model sent them."""
    for k in arguments:
        if not isinstance(k, str) or not k.isidentifier() or keyword.iskeyword(k):
            raise StateError(f"{name}: argument name {k!r} is not a parameter name")
    text = f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})"
    parse_call(text)
    return text


def parse_call(text: str) -> str:
    """The function a call string calls, or `StateError`: one call of a known BFCL function
    whose arguments (positional, as in some ground truth, or by name) are literals - nothing
    else reaches BFCL's `eval`."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError) as e:
        raise StateError(f"not a call: {text[:200]!r}") from e
    if (not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name)
            or node.func.id not in known_functions()):
        raise StateError(f"not a call of a BFCL function: {text[:200]!r}")
    values = [*node.args, *(k.value for k in node.keywords)]
    if any(k.arg is None for k in node.keywords) or any(isinstance(v, ast.Starred)
                                                        for v in values):
        raise StateError(f"*args / **kwargs in a call: {text[:200]!r}")
    for value in values:
        try:
            ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as e:
            raise StateError(f"an argument that is not a literal: {text[:200]!r}") from e
    return node.func.id


def long_context(case_id: str) -> bool:
    """BFCL's rule (multi_turn_checker, base_handler): long-context state for these."""
    category = case_id.rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def execute(case: Mapping[str, Any], calls: Sequence[str]) -> list[str]:
    """Build the case's API objects from its initial_config and run `calls` on them in
    order with BFCL's `execute_multi_turn_func_call`; each call's result as BFCL gives it
    (a string; a dict as JSON; an exception as 'Error during execution: ...')."""
    data = validate_case(dict(case))
    for call in calls:
        parse_call(call)
    model = f"switchback_bfcl_{uuid.uuid4().hex}"
    with LOCK:
        try:
            results, _ = _bfcl.multi_turn_utils.execute_multi_turn_func_call(
                func_call_list=list(calls), initial_config=data.get("initial_config", {}),
                involved_classes=data["involved_classes"], model_name=model,
                test_entry_id=data["id"], long_context=long_context(data["id"]))
        finally:
            forget(model)
    return [str(r) for r in results]


def forget(model: str) -> None:
    """Drop the API objects BFCL's executor cached for `model` (its module's globals)."""
    space = vars(_bfcl.multi_turn_utils)
    for name in [n for n in space if n.startswith(model)]:
        del space[name]


__all__ = ["CALLS_PATH", "CASE_DOCUMENT", "CASE_PATH", "INSTRUCTIONS_PATH", "Record",
           "StateError", "call_string", "case_document", "execute", "job_documents",
           "parse_call", "read_case", "turn_of"]
