"""`pip install` gives a `switchback` command: starter.py's commands plus `worker`, its
messages naming `switchback`, its help listing the environment it reads (the worker's:
tests/test_cli_help.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).parent / "switchback"  # the installed entry point


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(COMMAND), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_the_installed_command_is_the_cli() -> None:
    out = run("--help")
    assert out.returncode == 0, out
    assert out.stdout.startswith("usage: switchback ")
    for command in ("start", "follow", "status", "rewind", "eval", "worker"):
        assert command in out.stdout
    assert "SWITCHBACK_UI_URL" in out.stdout and "TEMPORAL_ADDRESS" in out.stdout


def test_its_errors_name_it_and_are_one_line() -> None:
    out = run("start", "--config", "{bad")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out
    assert out.stderr.startswith("switchback start: ") and len(out.stderr.splitlines()) == 1


@pytest.mark.parametrize(("variable", "lacking"), [
    ("TEMPORAL_DEPLOYMENT_NAME", "a build id"), ("TEMPORAL_WORKER_BUILD_ID", "a deployment name"),
    ("SWITCHBACK_DEPLOYMENT_NAME", "a build id"), ("SWITCHBACK_BUILD_ID", "a deployment name")])
def test_its_worker_refuses_half_a_version(variable: str, lacking: str) -> None:
    out = subprocess.run([str(COMMAND), "worker"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp",
                                          variable: "v1",
                                          "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9"})
    assert out.returncode == 1 and "Traceback" not in out.stderr, out
    assert out.stderr == (f"switchback worker: {variable} is set but {lacking} is not: set "
                          "both TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID (Worker "
                          "Deployment Versioning), or neither\n"), out.stderr


def test_its_worker_says_in_one_line_that_s3_is_down() -> None:
    out = subprocess.run([str(COMMAND), "worker"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp",
                                           "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9"})
    assert out.returncode == 1 and "Traceback" not in out.stderr, out
    assert out.stderr.strip().splitlines()[-1].startswith(
        "switchback worker: S3 (http://127.0.0.1:9): "), out.stderr
