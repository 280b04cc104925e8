"""When the CLI or the worker cannot reach Temporal, one line says the address and the
namespace it tried and where each came from (a variable, a profile of Temporal's config
file, the default), with no traceback; the default address is never assumed silently."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from switchback.devstack.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).parent / "switchback"  # the installed entry point
BARE = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # no profile file either


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(COMMAND), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**BARE, **env})


def one_line(out: subprocess.CompletedProcess, prefix: str) -> str:
    assert out.returncode == 1 and "Traceback" not in out.stderr, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), out.stderr
    return lines[0]


def test_the_variables_named() -> None:
    port = free_port()
    line = one_line(run("list", env={"TEMPORAL_ADDRESS": f"127.0.0.1:{port}",
                                     "TEMPORAL_NAMESPACE": "prod"}), "switchback list: ")
    assert (f"cannot reach Temporal at 127.0.0.1:{port} (TEMPORAL_ADDRESS), namespace 'prod' "
            "(TEMPORAL_NAMESPACE): connection refused" in line), line


def test_a_profile_named(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "temporal.toml"
    config.write_text(f'[profile.staging]\naddress = "127.0.0.1:{port}"\n'
                      'namespace = "staging-ns"\n')
    line = one_line(run("status", "job-1", env={"TEMPORAL_CONFIG_FILE": str(config),
                                               "TEMPORAL_PROFILE": "staging"}),
                    "switchback status: ")
    assert (f"at 127.0.0.1:{port} (profile 'staging' of TEMPORAL_CONFIG_FILE), namespace "
            "'staging-ns' (profile 'staging' of TEMPORAL_CONFIG_FILE)" in line), line
    # the variable over the profile, each setting on its own
    line = one_line(run("status", "job-1", env={"TEMPORAL_CONFIG_FILE": str(config),
                                               "TEMPORAL_PROFILE": "staging",
                                               "TEMPORAL_NAMESPACE": "mine"}),
                    "switchback status: ")
    assert "(profile 'staging' of TEMPORAL_CONFIG_FILE), namespace 'mine' (TEMPORAL_NAMESPACE)" \
        in line, line


def test_the_default_is_said() -> None:
    """Nothing names a server: a note says 127.0.0.1:7233 is used (whatever answers there,
    if anything, on this machine; a read-only command)."""
    out = run("status", f"nosuch-{uuid.uuid4().hex[:8]}", env={})
    lines = out.stderr.strip().splitlines()
    assert lines[0] == ("switchback status: note: no TEMPORAL_ADDRESS and no profile address: "
                        "using 127.0.0.1:7233"), out.stderr
    assert out.returncode == 1 and "Traceback" not in out.stderr and len(lines) == 2, out
    assert ("127.0.0.1:7233 (the default: no TEMPORAL_ADDRESS, no address in a profile), "
            "namespace 'default' (the default)" in lines[1] or "no job" in lines[1]), lines[1]


def test_a_namespace_the_server_lacks(client) -> None:
    address = client.service_client.config.target_host
    line = one_line(run("status", "job-1", env={"TEMPORAL_ADDRESS": address,
                                                "TEMPORAL_NAMESPACE": "nosuch-ns"}),
                    "switchback status: ")
    assert (f"namespace 'nosuch-ns' (TEMPORAL_NAMESPACE) not found on {address} "
            "(TEMPORAL_ADDRESS)" in line), line


def test_the_worker_says_where_it_tried(s3) -> None:
    port = free_port()
    s3_env = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    out = run("worker", env={**s3_env, "TEMPORAL_ADDRESS": f"127.0.0.1:{port}"})
    assert out.returncode == 1 and "Traceback" not in out.stderr, out
    line = out.stderr.strip().splitlines()[-1]  # after the worker's own log lines (boto's)
    assert line.startswith("switchback worker: "), out.stderr
    assert (f"cannot reach Temporal at 127.0.0.1:{port} (TEMPORAL_ADDRESS), namespace "
            "'default' (the default): connection refused" in line), line


def test_the_worker_on_a_namespace_the_server_lacks(client, s3) -> None:
    address = client.service_client.config.target_host
    s3_env = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    out = run("worker", env={**s3_env, "TEMPORAL_ADDRESS": address,
                             "TEMPORAL_NAMESPACE": "nosuch-ns"})
    assert out.returncode == 1 and "Traceback" not in out.stderr, out
    assert out.stderr.strip().splitlines()[-1] == (
        f"switchback worker: namespace 'nosuch-ns' (TEMPORAL_NAMESPACE) not found on {address} "
        "(TEMPORAL_ADDRESS)"), out.stderr
