"""Tool schemas and argument parsing: `openai_tool`, `parse_arguments`, `argument_summary`."""

from __future__ import annotations

import pytest

from switchback.activities.tools.registry import (
    TOOLS,
    ListFilesArgs,
    ReadFileArgs,
    SearchFilesArgs,
    TodoRewindArgs,
    TodoWriteArgs,
    argument_summary,
    openai_tool,
    parse_arguments,
)


def keys(schema: object) -> set[str]:
    """The JSON-schema keywords used anywhere in `schema` (a property's name is not one: a
    tool may take an argument called `title`)."""
    if isinstance(schema, dict):
        props = schema.get("properties")
        named = {k for v in props.values() for k in keys(v)} if isinstance(props, dict) else set()
        return set(schema) | named | {k for key, v in schema.items() if key != "properties"
                                      for k in keys(v)}
    if isinstance(schema, list):
        return {k for v in schema for k in keys(v)}
    return set()


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_openai_tool_schema(name: str) -> None:
    tool = openai_tool(name)
    assert tool["type"] == "function"
    fn = tool["function"]
    assert fn["name"] == name and fn["description"] == TOOLS[name].description
    assert fn["parameters"]["type"] == "object"
    assert "title" not in keys(fn["parameters"])


def test_openai_tool_keeps_descriptions_required_and_refs() -> None:
    params = openai_tool("todo_write")["function"]["parameters"]
    assert params["required"] == ["phase", "todos"]
    assert params["properties"]["phase"]["description"] == "Title of the next phase"
    item = params["properties"]["todos"]["items"]["$ref"].split("/")[-1]
    assert params["$defs"][item]["properties"]["id"] == {"type": "integer"}
    offset = openai_tool("read_file")["function"]["parameters"]["properties"]["offset"]
    assert offset["minimum"] == 0 and offset["default"] == 0


def test_parses_valid_arguments() -> None:
    args, error = parse_arguments("read_file", '{"path": "notes/a.md", "offset": 10}')
    assert error is None and args == ReadFileArgs(path="notes/a.md", offset=10)
    args, error = parse_arguments(
        "todo_write", '{"phase": "P", "todos": [{"id": 1, "content": "do it"}]}')
    assert error is None and isinstance(args, TodoWriteArgs) and args.todos[0].id == 1


@pytest.mark.parametrize("raw", [None, "", "{}"])
def test_missing_arguments_mean_an_empty_object(raw: str | None) -> None:
    assert parse_arguments("list_files", raw) == (ListFilesArgs(path=""), None)


def test_unknown_tool() -> None:
    assert parse_arguments("rm_rf", "{}") == (None, "unknown tool 'rm_rf'")


@pytest.mark.parametrize("raw", ['{"path": "a", ', "{'path': 'a'}", "path=a", "{"])
def test_malformed_json_names_the_tool(raw: str) -> None:
    args, error = parse_arguments("read_file", raw)
    assert args is None and error is not None
    assert error.startswith("the arguments of 'read_file' are not valid JSON (")
    assert "at char" in error and error.endswith("send a JSON object")


@pytest.mark.parametrize("raw", ["[]", '["a.md"]', '"a.md"', "3", "null", "true"])
def test_non_object_json(raw: str) -> None:
    assert parse_arguments("read_file", raw) == (
        None, "the arguments of 'read_file' must be a JSON object")


@pytest.mark.parametrize(("name", "raw", "field"), [
    ("read_file", '{"offset": 1}', "path: Field required"),
    ("read_file", '{"path": "a", "offset": -1}', "offset: Input should be greater than"),
    ("write_file", '{"path": "a"}', "content: Field required"),
    ("search_files", '{"query": ""}', "query: String should have at least 1 character"),
    ("todo_write", '{"phase": "P", "todos": [{"id": "x", "content": "c"}]}', "todos.0.id:"),
    ("todo_write", '{"phase": "P", "todos": [{"id": 1}]}', "todos.0.content: Field required"),
    ("job_complete", '{"summary": "s", "confidence": 2}', "confidence: Input should be less"),
])
def test_schema_errors_name_the_field(name: str, raw: str, field: str) -> None:
    args, error = parse_arguments(name, raw)
    assert args is None and error is not None
    assert error.startswith(f"bad arguments for '{name}': ")
    assert field in error


def test_argument_summary() -> None:
    assert argument_summary(None) == ""
    assert argument_summary(ReadFileArgs(path="notes/a.md")) == "notes/a.md"
    assert argument_summary(SearchFilesArgs(query="GoBD")) == "GoBD"
    assert argument_summary(SearchFilesArgs(query="GoBD", path="docs")) == "docs"
    assert argument_summary(ListFilesArgs()) == ""
    assert argument_summary(TodoWriteArgs(phase="Phase 2", todos=[])) == "Phase 2"
    assert argument_summary(TodoRewindArgs(issue="x" * 500)) == "x" * 120
