"""A throwaway stack around a real local model: run one command against it, then stop it all.

    python -m switchback.devstack.real_stack [--model 1.5b] [--port PORT] [--keep DIR] \
        -- COMMAND ...

Starts a Temporal dev server, SeaweedFS, llama-server (the local model installed by `make
real-model`, devstack/local_model_spec.py) and a worker, each on a free port (never the dev
stack's fixed ones, so it runs next to `python -m switchback.devstack up` and other people's
servers),
llama-server and the worker `nice`d; runs COMMAND with the stack's variables
(TEMPORAL_ADDRESS, AWS_*, SWITCHBACK_LOCAL_BASE_URL for the `local` endpoint), prints where the
web UI is, and stops everything it started when COMMAND ends (or on Ctrl-C). Logs and data in
a temporary folder (`--keep DIR` keeps them there). Exit status: COMMAND's.

    python -m switchback.devstack.real_stack -- python starter.py eval --config notes --runs 3
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from switchback.devstack.local_model_spec import (
    DEFAULT_MODEL,
    MODELS,
    InstallError,
    Layout,
    LlamaServer,
    cache_dir,
)
from switchback.devstack.processes import free_port, spawn, terminate_group
from switchback.devstack.seaweed import SeaweedS3
from switchback.devstack.temporal_server import TemporalDevServer

ROOT = Path(__file__).resolve().parent.parent
ACCESS_KEY, SECRET_KEY = "switchback", "switchback-secret"


def llama_port(start: int = 8410) -> int:
    """A free port from `start` on (8400/8401 belong to the dev stack)."""
    from switchback.devstack.processes import port_is_free

    for port in range(start, start + 200):
        if port_is_free(port):
            return port
    return free_port()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m switchback.devstack.real_stack",
                                description=__doc__)
    p.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
    p.add_argument("--port", type=int, default=0, help="llama-server's port (default: free, "
                   ">= 8410)")
    p.add_argument("--ctx", type=int, default=None, help="llama-server's --ctx-size")
    p.add_argument("--keep", help="keep logs and data in this folder")
    p.add_argument("--nice", type=int, default=5)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        p.error("give the command to run after --")
    _stop_on_signals()
    folder = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="switchback-real-"))
    folder.mkdir(parents=True, exist_ok=True)
    spec = MODELS[a.model]
    temporal = TemporalDevServer(free_port(), free_port(), db_file=str(folder / "temporal.db"),
                                 log_path=str(folder / "temporal.log"))
    s3 = SeaweedS3(str(folder / "s3"), access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                   log_path=str(folder / "s3.log"))
    try:
        llama = LlamaServer(Layout(cache_dir()), spec, a.port or llama_port(),
                            folder / "llama-server.log", nice=a.nice, ctx=a.ctx)
    except InstallError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    worker = None
    try:
        print(f"real stack in {folder}: starting Temporal, SeaweedFS, llama-server "
              f"({spec.alias}), a worker", flush=True)
        temporal.start(timeout=90)
        s3.start(timeout=90)
        t0 = time.monotonic()
        llama.__enter__()
        print(f"llama-server on {llama.base_url} healthy after {time.monotonic() - t0:.0f} s",
              flush=True)
        env = {**os.environ, "PYTHONUNBUFFERED": "1",
               "TEMPORAL_ADDRESS": temporal.address, "TEMPORAL_NAMESPACE": "default",
               "AWS_ENDPOINT_URL_S3": s3.endpoint_url, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
               "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1",
               "SWITCHBACK_LOCAL_BASE_URL": llama.base_url,
               "SWITCHBACK_UI_URL": temporal.ui_url,
               "SWITCHBACK_GRAPH_PATH": str(folder / "graph")}
        worker = spawn(["nice", "-n", str(a.nice), sys.executable, "worker.py"],
                       log_path=str(folder / "worker.log"), env=env, cwd=ROOT)
        _wait_for(folder / "worker.log", "worker started", worker, 60)
        print(f"web UI {temporal.ui_url} (Temporal {temporal.address}); logs in {folder}",
              flush=True)
        return subprocess.run(command, env=env, cwd=ROOT).returncode
    except KeyboardInterrupt:
        return 130
    except (RuntimeError, InstallError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        if worker is not None:
            terminate_group(worker.pid, timeout=20, proc=worker)
        llama.__exit__()
        s3.stop()
        temporal.stop()
        print(f"real stack stopped (logs in {folder})", flush=True)


def _stop_on_signals() -> None:
    """Ctrl-C, `kill` (SIGTERM) and a closed terminal (SIGHUP) all stop the stack it started.
    SIGINT is armed again: a shell that starts this in the background (`... &`) ignores it."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def _wait_for(log: Path, text: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited {proc.returncode}; see {log}")
        if log.exists() and text in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise RuntimeError(f"worker did not log {text!r} in {timeout:.0f} s; see {log}")


if __name__ == "__main__":
    sys.exit(main())
