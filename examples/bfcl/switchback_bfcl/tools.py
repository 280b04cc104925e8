"""Every function of BFCL's eight multi-turn API classes as a switchback tool.

The tools are built from BFCL's function docs, not from Python signatures: each is a
`switchback.Tool` whose argument model shows the model BFCL's JSON schema (the schema an
OpenAI-style function-calling model gets from BFCL: the doc with BFCL's Python hint,
converted as BFCL's `convert_to_tool` does) and passes the arguments on exactly as the
model sent them - BFCL validates nothing either: a wrong argument is the API's error.

A call (`call`) reads the case's id, the turn (from instructions.md) and the calls so far
from the workspace (`state.py`), runs them and the new call with BFCL's executor, appends
the new call in BFCL's call-string form to the current turn of `bfcl/calls.json` and answers
BFCL's result.
The entry point registers `TOOLS`; `TOOLS_BY_NAME` finds one.
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from switchback import Tool, ToolContext, ToolError
from switchback_bfcl import _bfcl, cases, state

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")  # switchback's (and OpenAI's) tool names


def _cast_to_openai_type(properties: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """BFCL's `model_handler.utils._cast_to_openai_type` (that module needs tree-sitter and
    tenacity to import; tests/test_bfcl.py checks this copy against its source)."""
    for key, value in properties.items():
        if "type" not in value:
            properties[key]["type"] = "string"
        else:
            var_type = value["type"]
            if mapping == _bfcl.GORILLA_TO_OPENAPI and var_type == "float":
                properties[key]["format"] = "float"
                properties[key]["description"] += " This is a float type value."
            if var_type in mapping:
                properties[key]["type"] = mapping[var_type]
            else:
                properties[key]["type"] = "string"
        if properties[key]["type"] == "array" or properties[key]["type"] == "object":
            if "properties" in properties[key]:
                properties[key]["properties"] = _cast_to_openai_type(
                    properties[key]["properties"], mapping)
            elif "items" in properties[key]:
                properties[key]["items"]["type"] = mapping[properties[key]["items"]["type"]]
                if (properties[key]["items"]["type"] == "array"
                        and "items" in properties[key]["items"]):
                    properties[key]["items"]["items"]["type"] = mapping[
                        properties[key]["items"]["items"]["type"]]
                elif (properties[key]["items"]["type"] == "object"
                        and "properties" in properties[key]["items"]):
                    properties[key]["items"]["properties"] = _cast_to_openai_type(
                        properties[key]["items"]["properties"], mapping)
    return properties


def openai_tools(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL's `convert_to_tool(docs, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)`:
    the Chat Completions tools BFCL sends an OpenAI function-calling model."""
    out = []
    for item in copy.deepcopy(docs):
        if "." in item["name"]:
            item["name"] = re.sub(r"\.", "_", item["name"])
        item["parameters"]["type"] = "object"
        item["parameters"]["properties"] = _cast_to_openai_type(
            item["parameters"]["properties"], _bfcl.GORILLA_TO_OPENAPI)
        out.append({"type": "function", "function": item})
    return out


def hinted(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The docs as BFCL's generation step offers them (its Python hint added)."""
    return list(_bfcl.utils._func_doc_language_specific_pre_processing(
        copy.deepcopy(docs), "multi_turn_base"))


def _show_bfcl_schema(schema: dict[str, Any], cls: type[Any]) -> None:
    schema.clear()
    schema.update(copy.deepcopy(PARAMETERS[cls.bfcl_function]))


class Arguments(BaseModel):
    """A BFCL function's arguments as the model sent them (`model_extra`, in its order);
    the JSON schema is BFCL's."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_show_bfcl_schema)
    bfcl_function: ClassVar[str] = ""


async def call(ctx: ToolContext, name: str, arguments: Mapping[str, Any]) -> str:
    """Run one call of BFCL function `name` on the case the workspace names; BFCL's result."""
    try:
        text = state.call_string(name, arguments)
        case_text = await ctx.files.read_optional(state.CASE_PATH)
        if case_text is None:
            raise ToolError("no_bfcl_case", f"the workspace has no BFCL case "
                            f"({state.CASE_PATH}; a runner gives it as an inline document: "
                            "switchback_bfcl.job_documents(case))")
        case = state.read_case(case_text)
        turn = state.turn_of(await ctx.files.read_optional(state.INSTRUCTIONS_PATH))
        record = state.Record.parse(await ctx.files.read_optional(state.CALLS_PATH))
        key = ctx.idempotency_key
        if key and record.last_key == key:  # a retry of a call that was recorded
            return record.last_result
        results = await asyncio.to_thread(state.execute, case, [*record.calls(), text])
    except (state.StateError, ValueError) as e:  # JSONDecodeError is a ValueError
        raise ToolError("bad_bfcl_state", str(e)) from e
    record.add(turn, text, key, results[-1])
    await ctx.files.write_text(state.CALLS_PATH, record.dump())
    return results[-1]


def _tool(doc: dict[str, Any]) -> Tool:
    name = doc["function"]["name"]
    if not NAME.fullmatch(name) or "__" in name:
        raise ValueError(f"BFCL function {name!r} is not a valid tool name")
    args: type[Arguments] = type(f"{name}_arguments", (Arguments,),
                                 {"bfcl_function": name, "__module__": __name__})

    async def run(ctx: ToolContext, args: Arguments) -> str:
        return await call(ctx, name, dict(args.model_extra or {}))

    run.__name__ = run.__qualname__ = name
    return Tool(name, doc["function"]["description"], args, run, context_param="ctx",
                model_param="args")


def _schemas() -> list[dict[str, Any]]:
    docs = [doc for c in _bfcl.CLASSES for doc in cases.function_docs(c)]
    names = [d["name"] for d in docs]
    clashes = sorted({n for n in names if names.count(n) > 1})
    # BFCL maps a name to the last involved class that has it; the eight classes share none
    assert not clashes, f"BFCL functions defined by two classes: {clashes}"
    return openai_tools(hinted(docs))


SCHEMAS: dict[str, dict[str, Any]] = {s["function"]["name"]: s for s in _schemas()}
PARAMETERS: dict[str, dict[str, Any]] = {n: s["function"]["parameters"]
                                         for n, s in SCHEMAS.items()}
TOOLS: list[Tool] = [_tool(s) for s in SCHEMAS.values()]
TOOLS_BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}

__all__ = ["PARAMETERS", "SCHEMAS", "TOOLS", "TOOLS_BY_NAME", "Arguments", "call",
           "hinted", "openai_tools"]
