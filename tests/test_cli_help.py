"""The CLI explains itself: help on every argument of every command (the installed apps'
too), `switchback --version`, and `switchback worker --help` listing every variable the
worker reads (worker.ENV_VARS) - and naming none it does not."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from switchback import starter, worker
from tests.test_deploy_manifests import TEMPORAL_ENVCONFIG

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).parent / "switchback"  # the installed entry point


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(COMMAND), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def arguments(p: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, argument) for every argument of `p` and its subcommands."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from arguments(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_argument_has_help() -> None:
    found = list(arguments(starter.parser()))
    commands = {path[0] for path, _ in found if path}
    assert {"start", "rewind", "approve", "rerun", "eval", "cat", "pipeline"} <= commands
    bare = [f"{' '.join(path)} {'/'.join(a.option_strings) or a.dest}"
            for path, a in found if not (a.help or "").strip()]
    assert not bare, f"arguments without help: {bare}"


def test_version() -> None:
    out = run("--version")
    (script,) = entry_points(group="console_scripts", name="switchback")
    assert script.dist is not None
    assert out.returncode == 0 and out.stdout == f"switchback {script.dist.version}\n", out


def test_worker_help_lists_every_variable_the_worker_reads() -> None:
    out = run("worker", "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage: switchback worker"), out
    listed = set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", out.stdout))
    missing = set(worker.ENV_VARS) - listed
    assert not missing, f"`switchback worker --help` does not list {sorted(missing)}"
    unknown = {v for v in listed if v not in worker.ENV_VARS and v not in TEMPORAL_ENVCONFIG
               and not v.startswith("TEMPORAL_TLS_")}
    assert not unknown, f"`switchback worker --help` lists what the worker does not read: " \
                        f"{sorted(unknown)}"
    for variable in ("TEMPORAL_DEPLOYMENT_NAME", "TEMPORAL_WORKER_BUILD_ID",
                     "SWITCHBACK_DEPLOYMENT_NAME", "OPENAI_BASE_URL"):
        assert variable in out.stdout


def test_worker_help_starts_no_worker() -> None:
    """--help is answered by the parser: nothing connects (no server here)."""
    out = subprocess.run([str(COMMAND), "worker", "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp",
                                                     "TEMPORAL_ADDRESS": "127.0.0.1:9"})
    assert out.returncode == 0 and "cannot reach" not in out.stderr, out
