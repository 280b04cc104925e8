"""MCP servers for the tests, all real and installed from the package index (no download at
run time): `mcp-server-time` and `mcp-server-git` (PyPI, stdio, in the `dev` extra), and
`notes` (tests/mcp/notes_server.py, written with the mcp SDK) over Streamable HTTP, started
here on a free port, and over stdio."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from switchback.activities.tools.mcp_config import McpConfig, parse
from switchback.activities.tools.mcp_sessions import McpServers
from switchback.devstack.processes import free_port, tcp_connectable, venv_bin

NOTES = str(Path(__file__).with_name("notes_server.py"))
TOKEN = "notes-test-token"
TOKEN_ENV = "SWITCHBACK_TEST_NOTES_AUTH"
QUIET = open(os.devnull, "w")  # noqa: SIM115 - the servers' stderr, for the whole session


@pytest.fixture(scope="session")
def git_repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.org"}
    (repo / "README.md").write_text("# Notes\n")
    for args in (["init", "-q", "-b", "main"], ["add", "README.md"],
                 ["commit", "-q", "-m", "Add the notes readme"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


@pytest.fixture(scope="session")
def notes_http() -> Iterator[str]:
    """The notes server over Streamable HTTP: its URL (it wants `Bearer <TOKEN>`)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, NOTES, "http", str(port), TOKEN],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if tcp_connectable("127.0.0.1", port):
                break
            assert proc.poll() is None, "the notes MCP server exited"
            time.sleep(0.1)
        os.environ[TOKEN_ENV] = f"Bearer {TOKEN}"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.environ.pop(TOKEN_ENV, None)
        proc.terminate()
        proc.wait(10)


def servers_config(git_repo: Path, notes_url: str, **extra: dict) -> McpConfig:
    return parse({"servers": {
        "time": {"command": venv_bin("mcp-server-time")},
        "git": {"command": venv_bin("mcp-server-git"), "args": ["--repository", str(git_repo)]},
        "notes_http": {"url": notes_url, "headers": {"Authorization": TOKEN_ENV}},
        "notes": {"command": sys.executable, "args": [NOTES, "stdio"]},
        **extra}}, "tests/mcp/conftest.py")


@pytest.fixture
def mcp(git_repo, notes_http) -> McpServers:
    """The worker's MCP servers; a worker built with them closes their sessions."""
    return McpServers(servers_config(git_repo, notes_http), errlog=QUIET)


def children(marker: str) -> list[int]:
    """Pids of this process's children whose command line contains `marker`."""
    me, out = os.getpid(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me and marker in cmd:
            out.append(int(pid))
    return out


def kill(pids: list[int]) -> None:
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
