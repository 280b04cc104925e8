"""Units of the MCP tool source: config names <-> wire names, globs, the config rewrite, the
operator's YAML, the tool record's argument checks, and how answers and errors of real
servers map to what the model reads."""

from __future__ import annotations

import mcp_types as types
import pytest
from temporalio.exceptions import ApplicationError

from switchback.activities.config_files import load_config
from switchback.activities.tools.mcp_config import McpConfigError, parse
from switchback.activities.tools.mcp_sessions import content_text
from switchback.activities.tools.record import RecordedTool, ToolRecord, check_arguments, summary_of
from switchback.activities.tools.tool_names import WIRE, Offered, resolve, servers_named, wire_name
from switchback.workflows.contract import CONTROL_TOOLS, ToolListing
from switchback.workflows.tool_listing import apply, entries


def test_wire_names_fit_openai_and_stay_unique():
    assert wire_name("time", "get_current_time") == "time__get_current_time"
    odd = wire_name("files", "read.file/v2")
    long = wire_name("server", "x" * 80)
    for name in (odd, long):
        assert WIRE.fullmatch(name) and len(name) <= 64
    assert odd.startswith("files__read_file_v2_")
    assert wire_name("s", "a.b") != wire_name("s", "a/b")  # same letters, other hash


OFFERED = [Offered("read_file", "read_file", "built-in"),
           Offered("word_count", "word_count", "package switchback-wordcount"),
           *(Offered(f"git.{t}", f"git__{t}", "mcp server git", "git", t)
             for t in ("git_log", "git_status", "git_diff")),
           Offered("time.get_current_time", "time__get_current_time", "mcp server time", "time",
                   "get_current_time")]


def test_names_globs_and_both_spellings_resolve():
    names, problems = resolve(["read_file", "git.git_d*", "time__get_current_time", "*_count",
                               "git.*"], OFFERED, ["git", "time"])
    assert problems == []
    assert names == {"read_file": ["read_file"], "git.git_d*": ["git__git_diff"],
                     "time__get_current_time": ["time__get_current_time"],
                     "*_count": ["word_count"],
                     "git.*": ["git__git_log", "git__git_status", "git__git_diff"]}


def test_what_resolves_to_nothing_says_what_there_is():
    _, problems = resolve(["read_fil", "git.log", "jira.*", "*.nothing"], OFFERED,
                          ["git", "time"])
    assert problems[0].startswith("'read_fil': unknown tool on this worker; did you mean "
                                  "read_file?")
    assert problems[1] == ("'git.log': MCP server 'git' has no tool matching 'log' (it has: "
                           "git_diff, git_log, git_status)")
    assert problems[2].startswith("'jira.*': no MCP server 'jira' is declared on this worker "
                                  "(declared: git, time;")
    assert problems[3].startswith("'*.nothing': MCP server 'git' has no tool matching")


def test_only_the_servers_a_config_names_are_listed():
    assert servers_named(["read_file", "git.*", "t*.now"], ["git", "time", "jira"]) == [
        "git", "time"]
    assert servers_named(["read_file", "*_count"], ["git"]) == []


def test_the_config_is_rewritten_to_wire_names():
    cfg = load_config({"tools": {"domain": ["git.*", "word_count"], "deferred": ["git.*"]},
                       "approval_required": ["git.git_log"],
                       "breakers": {"exempt_tools": ["time.*"]}})
    listed = entries(cfg.config)
    assert {"git.*", "word_count", "tool_search", "git.git_log", "time.*",
            "read_file"} <= set(listed)
    names, problems = resolve(listed, OFFERED + [Offered(n, n, "built-in") for n in (
        "write_file", "list_files", "search_files", "todo_write", "tool_search",
        *CONTROL_TOOLS)], ["git", "time"])
    assert problems == []
    out = apply(cfg, ToolListing(record="job/.switchback/tools/r_1.json", names=names))
    c = out.config
    assert c.tools.domain == ["git__git_log", "git__git_status", "git__git_diff", "word_count"]
    assert c.tools.deferred == ["git__git_log", "git__git_status", "git__git_diff"]
    assert c.approval_required == ["git__git_log"]
    assert c.breakers.exempt_tools == ["time__get_current_time"]
    assert c.tools.workspace == cfg.config.tools.workspace
    assert out.tool_record == "job/.switchback/tools/r_1.json"
    assert "tool_search" in c.tools.for_phase("tactical")


@pytest.mark.parametrize("data, problem", [
    ({"servers": {"t": {"command": "x", "url": "http://h"}}}, "either 'command'"),
    ({"servers": {"t": {}}}, "either 'command'"),
    ({"servers": {"t": {"url": "ftp://h"}}}, "not an http(s) URL"),
    ({"servers": {"t": {"url": "http://h", "env": ["A"]}}}, "are for stdio servers"),
    ({"servers": {"t": {"command": "x", "headers": {"A": "B"}}}}, "are for Streamable HTTP"),
    ({"servers": {"t": {"command": "x", "env": ["NOT A NAME"]}}}, "not variable names"),
    ({"servers": {"t": {"command": "x", "comand": "y"}}}, "servers.t.comand: Extra inputs"),
    ({"servers": {"a__b": {"command": "x"}}}, "servers.a__b: a server name"),
    ({"servers": {"a.b": {"command": "x"}}}, "servers.a.b: a server name"),
    (["servers"], "expected a mapping"),
])
def test_the_operators_file_is_checked(data, problem):
    with pytest.raises(McpConfigError) as e:
        parse(data, "mcp.yaml")
    assert problem in str(e.value) and str(e.value).startswith("mcp.yaml")


def test_variables_are_read_by_name_and_a_missing_one_is_named(monkeypatch):
    cfg = parse({"servers": {"t": {"url": "http://h/mcp", "headers": {"Authorization": "TOK"}},
                             "s": {"command": "x", "env": ["TOK"], "cwd": "sub"}}},
                "/etc/switchback/mcp.yaml")
    assert cfg.servers["s"].cwd == "/etc/switchback/sub"
    monkeypatch.setenv("TOK", "Bearer x")
    assert cfg.servers["t"].header_values("t") == {"Authorization": "Bearer x"}
    assert cfg.servers["s"].environment("s") == {"TOK": "Bearer x"}
    monkeypatch.delenv("TOK")
    with pytest.raises(McpConfigError) as e:
        cfg.servers["t"].header_values("t")
    assert str(e.value) == ("MCP server 't': header Authorization names the variable TOK, "
                            "which is not set on this worker")


RECORD = ToolRecord(tools={"git__git_log": RecordedTool(
    name="git.git_log", source="mcp server git", server="git", tool="git_log", schema_={
        "type": "function", "function": {"name": "git__git_log", "description": "Log.",
                                         "parameters": {
                                             "type": "object", "required": ["repo_path"],
                                             "properties": {"repo_path": {"type": "string"},
                                                            "max_count": {"type": "integer"}}}}})})


def test_calls_of_recorded_tools_are_checked_against_their_schema():
    assert check_arguments(RECORD, "git__git_log", '{"repo_path": "/r", "max_count": 2}') == (
        {"repo_path": "/r", "max_count": 2}, None)
    assert check_arguments(RECORD, "git__git_log", '{"max_count": "2"}')[1] == (
        "bad arguments for 'git__git_log': arguments: 'repo_path' is a required property; "
        "max_count: '2' is not of type 'integer'")
    assert "not valid JSON" in (check_arguments(RECORD, "git__git_log", "{") [1] or "")
    assert check_arguments(RECORD, "git__git_log", "[1]")[1] == (
        "the arguments of 'git__git_log' must be a JSON object")
    assert summary_of({"repo_path": "/r", "max_count": 2}) == "/r"
    assert summary_of({"query": "q", "other": "o"}) == "q"
    assert RECORD.schemas(["git__git_log", "unknown"])[0]["function"]["name"] == "git__git_log"


def test_answers_become_text_the_model_reads():
    result = types.CallToolResult(content=[
        types.TextContent(type="text", text="line"),
        types.ImageContent(type="image", data="QUJD" * 10, mime_type="image/png"),
        types.ResourceLink(type="resource_link", name="r", uri="file:///a", description="A")])
    assert content_text(result) == ("line\n[image: image/png, about 30 bytes, not shown]\n"
                                    "[resource file:///a: A]")
    structured = types.CallToolResult(content=[], structured_content={"n": 1})
    assert content_text(structured) == '{\n "n": 1\n}'
    assert content_text(types.CallToolResult(content=[])) == "(the tool returned no content)"


async def test_error_answers_of_real_servers(mcp):
    # mcp-server-time answers an unknown tool with a JSON-RPC error, the notes server with an
    # isError result: both are errors the model reads, not retries
    unknown = await mcp.call("time", "nope", {})
    assert (unknown.ok, unknown.code) == (False, "mcp_error")
    assert "Unknown tool: nope (JSON-RPC error -32602)" in unknown.text
    unknown = await mcp.call("notes", "nope", {})
    assert (unknown.ok, unknown.code, unknown.text) == (False, "mcp_tool_error",
                                                        "Unknown tool: nope")
    bad = await mcp.call("time", "get_current_time", {})
    assert (bad.ok, bad.code) == (False, "mcp_tool_error") and "timezone" in bad.text
    ok = await mcp.call("notes_http", "lookup", {"key": "omega"})
    assert (ok.ok, ok.text) == (True, "Omega is the last letter.")
    await mcp.close()
    mcp.config.servers["time"].command = "/nonexistent/mcp-server-time"
    with pytest.raises(ApplicationError) as e:  # retried by Temporal
        await mcp.call("time", "get_current_time", {"timezone": "UTC"})
    assert e.value.type == "MCPServerUnavailable" and not e.value.non_retryable
    assert "MCP server 'time' (stdio: /nonexistent/mcp-server-time) did not start" in str(e.value)


def test_job_input_cannot_declare_a_server():
    from switchback.activities.config_files import ConfigError

    for inline in ({"mcp": {"servers": {"x": {"command": "sh"}}}},
                   {"tools": {"servers": {"x": {"url": "http://evil/mcp"}}}}):
        with pytest.raises(ConfigError) as e:
            load_config(inline)
        assert "Extra inputs are not permitted" in str(e.value)
