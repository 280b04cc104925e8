"""The public tool API (switchback.tool): schemas from signatures and docstrings, the two
argument styles, results, errors; and the package loader that registers tools by entry point."""

from __future__ import annotations

import uuid
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from switchback import Tool, ToolContext, ToolError, ToolResult, tool
from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.tools import catalog, packages
from switchback.activities.tools.registry import openai_tool, parse_arguments
from switchback.tools import parse_docstring
from switchback.workflows.contract import ToolLimits, WorkspaceRef

LIMITS = ToolLimits(read_max_chars=100, max_file_bytes=50, min_todos=1, max_todos=5)


def test_docstring_gives_description_and_parameter_texts():
    text, args = parse_docstring('''Find things in the workspace.

        More detail, over
        two lines.

        Args:
            query (str): what to look for,
                over two lines
            limit: how many
        Returns:
            the hits
        ''')
    assert text == "Find things in the workspace.\n\nMore detail, over two lines."
    assert args == {"query": "what to look for, over two lines", "limit": "how many"}


def test_annotated_parameters_become_the_schema():
    @tool
    async def lookup(ctx: ToolContext, query: str, limit: Annotated[int, Field(ge=1)] = 3,
                     exact: bool = False) -> str:
        """Look something up.

        Args:
            query: what to look for
            exact: match the whole text
        """
        return query

    assert isinstance(lookup, Tool) and lookup.context_param == "ctx"
    schema = lookup.args.model_json_schema()
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"]["description"] == "what to look for"
    assert schema["properties"]["limit"]["minimum"] == 1
    assert schema["additionalProperties"] is False
    args = lookup.args.model_validate({"query": "x"})
    assert (args.query, args.limit, args.exact) == ("x", 3, False)


class Args(BaseModel):  # at module level: annotations are resolved by name
    path: str = Field(description="a file")


def test_a_pydantic_model_argument_and_the_options():
    @tool(name="fetch-it", description="Fetch a file.", needs_approval=lambda a: True)
    def fetch(args: Args) -> dict:
        return {"path": args.path}

    assert (fetch.name, fetch.description, fetch.args, fetch.model_param) == (
        "fetch-it", "Fetch a file.", Args, "args")
    assert fetch.context_param is None and fetch.needs_approval is not None
    assert fetch(Args(path="a")) == {"path": "a"}  # still the function


@pytest.mark.parametrize("source, problem", [
    ("def f(x: int) -> str:\n    return ''", "give it a docstring"),
    ("def f(x) -> str:\n    '''Doc.'''", "needs a type annotation"),
    ("def f(*x: int) -> str:\n    '''Doc.'''", "*args"),
])
def test_definition_mistakes_are_named(source, problem):
    scope: dict = {}
    exec(source, scope)  # noqa: S102 - our own snippets
    with pytest.raises((TypeError, ValueError)) as e:
        tool(scope["f"])
    assert problem in str(e.value) and ".f" in str(e.value)


def test_names_must_fit_the_wire_and_leave_dots_to_mcp():
    for bad in ("git.status", "a__b", "1st", "x" * 65):
        with pytest.raises(ValueError):
            tool(name=bad)(lambda: "")  # type: ignore[arg-type]


@pytest.fixture
def files(s3) -> WorkspaceFiles:
    return WorkspaceFiles(s3, WorkspaceRef(bucket="switchback",
                                           job_id=f"api-{uuid.uuid4().hex[:8]}"))


async def test_the_adapter_runs_a_tool_on_the_workspace(files):
    @tool
    async def note(ctx: ToolContext, text: str) -> ToolResult:
        """Write a note."""
        path = await ctx.files.write_text("notes/n.md", text)
        await ctx.files.write_text("notes/old.md", "x")
        await ctx.files.delete("notes/old.md")
        return ToolResult(f"wrote {path} for {ctx.job_id}")

    out = await packages.handler(note)(files, note.args(text="hello"), LIMITS)
    assert out.text == f"wrote notes/n.md for {files.ws.job_id}"
    assert out.changed == ["notes/n.md", "notes/old.md"]
    assert await files.read_text("notes/n.md") == "hello"
    with pytest.raises(ToolError) as e:  # the job's size limit, as a public ToolError
        await packages.handler(note)(files, note.args(text="y" * 51), LIMITS)
    assert e.value.code == "file_too_large"

    @tool
    def stats(n: int) -> list[int]:
        """Plain function, run in a thread; a list comes back as JSON."""
        return list(range(n))

    assert (await packages.handler(stats)(files, stats.args(n=3), LIMITS)).text == \
        "[\n 0,\n 1,\n 2\n]"


def test_installed_packages_register_through_entry_points():
    assert packages.load_errors() == ()
    assert catalog.SOURCES["word_count"] == "package switchback-wordcount"
    assert catalog.SOURCES["cite_document"] == "package switchback-documents"  # the app's
    assert catalog.SOURCES["web_search"] == "built-in"
    assert catalog.SOURCES["read_file"] == "built-in"
    schema = openai_tool("word_count")["function"]
    assert schema["description"].startswith("Count the words")
    assert parse_arguments("word_count", '{"path": "a.md", "top": 99}')[1] == (
        "bad arguments for 'word_count': top: Input should be less than or equal to 50")


def test_a_broken_entry_point_is_named_and_others_load(monkeypatch):
    from importlib.metadata import EntryPoint

    good = EntryPoint("wordcount", "switchback_wordcount", packages.GROUP)
    bad = EntryPoint("broken", "no_such_module_xyz", packages.GROUP)
    monkeypatch.setattr(packages, "entry_points", lambda group: [bad, good])
    packages._load.cache_clear()
    try:
        found, errors = packages._load()
    finally:
        packages._load.cache_clear()
    assert "word_count" in found
    assert any("'broken = no_such_module_xyz'" in e and "does not load" in e for e in errors)
