"""`starter.py tools`: the tools a worker here offers, with source and arguments; a server
that does not start is named and makes the exit status 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from switchback.devstack.processes import venv_bin

ROOT = Path(__file__).resolve().parent.parent


def starter(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "starter.py", "tools", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_tools_lists_every_source(tmp_path):
    servers = tmp_path / "mcp.yaml"
    servers.write_text(f"servers:\n  time:\n    command: {venv_bin('mcp-server-time')}\n"
                       "  broken:\n    command: /nonexistent/mcp-server\n")
    out = starter("--mcp-file", str(servers))
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["TOOL", "SOURCE", "ARGUMENTS"]
    row = {ln.split()[0]: ln for ln in lines[1:]}
    assert "built-in" in row["read_file"] and "path: string, offset?: integer" in row["read_file"]
    assert "package switchback-wordcount" in row["word_count"]
    assert row["time.get_current_time"].split() == [
        "time.get_current_time", "(time__get_current_time)", "mcp", "server", "time",
        "timezone:", "string"]
    assert ("starter.py tools: MCP server 'broken' (stdio: /nonexistent/mcp-server) did not "
            "start") in out.stderr

    only = starter("--mcp-file", str(servers), "--json", "time.*")
    tools = json.loads(only.stdout)
    assert [t["name"] for t in tools] == ["time.get_current_time", "time.convert_time"]
    assert tools[0]["called_as"] == "time__get_current_time"
    assert tools[0]["schema"]["function"]["parameters"]["required"] == ["timezone"]


def test_a_bad_servers_file_is_a_usage_error(tmp_path):
    bad = tmp_path / "mcp.yaml"
    bad.write_text("servers:\n  time:\n    comand: mcp-server-time\n")
    out = starter("--mcp-file", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip() == (f"starter.py tools: {bad}: servers.time.comand: Extra inputs "
                                  "are not permitted")
