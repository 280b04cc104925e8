"""A switchback fleet on one machine: one Temporal, one S3, the scripted model, N workers.

    python -m deploy.local.fleet --workers 3          # free ports, state in ./.fleet/
    python -m deploy.local.fleet --procfile           # deploy/local/Procfile (fixed ports)
    python -m deploy.local.fleet --dotenv > .env      # the Procfile's environment

Contract:

* ``Fleet(workers=N, state_dir=...)`` starts a Temporal dev server
  (``devstack.temporal_server.TemporalDevServer``, dynamic config and search attributes as in
  the dev stack), SeaweedFS (``devstack.seaweed.SeaweedS3``, buckets ``switchback`` and
  ``switchback-payloads``), the scripted model server
  (``python -m switchback.devstack.scripted_model``,
  default script ``devstack/scripts/creator_demo.yaml``) and N ``python worker.py`` processes
  polling one task queue; each child runs in its own process group with its log in
  ``<state_dir>/logs/``. Ports are free ones unless given. ``stop()`` stops all of it, workers
  first. The CLI writes ``<state_dir>/env`` (exports to talk to the fleet), restarts a worker
  that dies (like a Deployment's replicas) and stops everything on Ctrl-C / SIGTERM.
* Library functions for tests that bring their own servers: ``worker_env`` (os.environ plus
  settings), ``start_worker`` (``python worker.py`` from the repository root, own process
  group), ``wait_worker_started``, ``kill_worker`` (signal the process group, reap) and
  ``stop_worker`` (SIGTERM, then SIGKILL after a timeout).
* ``procfile_text()`` renders the same processes with fixed ports for honcho / foreman;
  ``deploy/local/Procfile`` is that text (tests/test_deploy_manifests.py checks it).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from switchback.devstack.processes import free_port, log_tail, spawn, terminate_group, wait_http_200
from switchback.devstack.seaweed import DEFAULT_BUCKET, SeaweedS3
from switchback.devstack.temporal_server import TemporalDevServer

ROOT = Path(__file__).resolve().parents[2]
MODEL_SCRIPT = ROOT / "devstack" / "scripts" / "creator_demo.yaml"
PAYLOAD_BUCKET = "switchback-payloads"  # activities/storage/payloads.py's default
ACCESS_KEY, SECRET_KEY = "switchback", "switchback-secret"
STARTED = "switchback worker started"  # what worker.py prints once it polls

# the Procfile's fixed ports (the same as `python -m switchback.devstack up`: run one or the other)
FIXED = {"temporal": 7233, "ui": 8233, "s3": 8333, "model": 8400,
         "weed_master": 9333, "weed_volume": 8480, "weed_filer": 8888, "weed_admin": 23646}
PROCFILE_STATE = ".fleet"


# -- one worker process ---------------------------------------------------------------------

def worker_env(settings: Mapping[str, str], base: Mapping[str, str] | None = None
               ) -> dict[str, str]:
    """The environment of one ``python worker.py``: ``base`` (default: os.environ) with
    ``settings`` on top, unbuffered output and this checkout on PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    env.update(settings)
    env["PYTHONUNBUFFERED"] = "1"
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + path if path else "")
    return env


def start_worker(env: Mapping[str, str], log_path: str | Path) -> subprocess.Popen[bytes]:
    """``python worker.py`` in the repository root, in its own process group."""
    return spawn([sys.executable, "worker.py"], log_path=log_path, env=dict(env), cwd=ROOT)


def wait_worker_started(proc: subprocess.Popen[bytes], log_path: str | Path,
                        timeout: float = 60) -> None:
    """Return once the worker printed that it polls; RuntimeError if it exits or times out."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if STARTED in Path(log_path).read_text(errors="replace"):
                return
        except OSError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"worker pid {proc.pid} exited with code {proc.returncode}:\n"
                               f"{log_tail(log_path, 30)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"worker pid {proc.pid} not started after {timeout:.0f}s:\n"
                               f"{log_tail(log_path, 30)}")
        time.sleep(0.1)


def kill_worker(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the worker's process group and reap it (SIGKILL: a crash)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def stop_worker(proc: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """SIGTERM (worker.py shuts down its pollers), SIGKILL after ``timeout``."""
    if proc.poll() is None:
        terminate_group(proc.pid, timeout=timeout, proc=proc)


# -- the fleet ------------------------------------------------------------------------------

def model_command(port: int, script: str | Path | None) -> list[str]:
    return [sys.executable, "-m", "switchback.devstack.scripted_model", "--host", "127.0.0.1",
            "--port", str(port), *(["--script", str(script)] if script else [])]


def stack_env(temporal_port: int, s3_port: int, model_port: int,
              task_queue: str = "switchback") -> dict[str, str]:
    """What a worker of this fleet needs (names from worker.ENV_VARS)."""
    return {
        "TEMPORAL_ADDRESS": f"127.0.0.1:{temporal_port}",
        "TEMPORAL_NAMESPACE": "default",
        "SWITCHBACK_TASK_QUEUE": task_queue,
        "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{s3_port}",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": "us-east-1",
        "SWITCHBACK_PAYLOAD_BUCKET": PAYLOAD_BUCKET,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{model_port}/v1",
        "OPENAI_API_KEY": "scripted",
    }


@dataclass
class Fleet:
    workers: int = 3
    state_dir: Path = field(default_factory=lambda: Path.cwd() / PROCFILE_STATE)
    task_queue: str = "switchback"
    temporal_port: int = 0  # 0: a free port
    ui_port: int = 0
    s3_port: int = 0
    model_port: int = 0
    model_script: Path | None = MODEL_SCRIPT
    temporal: TemporalDevServer | None = None
    s3: SeaweedS3 | None = None
    model: subprocess.Popen[bytes] | None = None
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def logs(self) -> Path:
        return self.state_dir / "logs"

    def worker_log(self, i: int) -> Path:
        return self.logs / f"worker-{i}.log"

    def env(self) -> dict[str, str]:
        """The worker settings; valid once ``start()`` returned."""
        assert self.temporal and self.s3
        return stack_env(self.temporal.port, self.s3.s3_port, self.model_port, self.task_queue)

    def start(self, timeout: float = 60) -> Fleet:
        self.state_dir = self.state_dir.resolve()
        self.logs.mkdir(parents=True, exist_ok=True)
        try:
            self.temporal = TemporalDevServer(
                self.temporal_port or free_port(), self.ui_port or free_port(),
                db_file=str(self.state_dir / "temporal.db"),
                log_path=str(self.logs / "temporal.log"))
            self.temporal.start(timeout)
            self.s3 = SeaweedS3(str(self.state_dir / "s3"), s3_port=self.s3_port or None,
                                access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                                log_path=str(self.logs / "s3.log"))
            self.s3.start(timeout)
            self.s3.ensure_bucket(PAYLOAD_BUCKET)
            self.model_port = self.model_port or free_port()
            self.model = spawn(model_command(self.model_port, self.model_script),
                               log_path=self.logs / "model.log", env=worker_env({}), cwd=ROOT)
            wait_http_200(f"http://127.0.0.1:{self.model_port}/v1/models", self.model,
                          timeout, self.logs / "model.log")
            self.procs = [self._start_worker(i) for i in range(self.workers)]
            for i, p in enumerate(self.procs):
                wait_worker_started(p, self.worker_log(i), timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_worker(self, i: int) -> subprocess.Popen[bytes]:
        return start_worker(worker_env(self.env()), self.worker_log(i))

    def restart_dead(self) -> list[int]:
        """Start a new process for each worker that exited; returns their indexes."""
        dead = [i for i, p in enumerate(self.procs) if p.poll() is not None]
        for i in dead:
            self.procs[i] = self._start_worker(i)
        return dead

    def stop(self) -> None:
        for p in self.procs:
            stop_worker(p)
        self.procs = []
        if self.model is not None:
            terminate_group(self.model.pid, timeout=10, proc=self.model)
            self.model = None
        for server in (self.s3, self.temporal):
            if server is not None:
                server.stop()

    def __enter__(self) -> Fleet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- Procfile -------------------------------------------------------------------------------

def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def procfile_text() -> str:
    """deploy/local/Procfile: the fleet's processes on FIXED ports, state in ./.fleet/."""
    temporal = TemporalDevServer(FIXED["temporal"], FIXED["ui"],
                                 db_file=f"{PROCFILE_STATE}/temporal.db").command()
    weed = SeaweedS3(f"{PROCFILE_STATE}/s3", s3_port=FIXED["s3"],
                     master_port=FIXED["weed_master"], volume_port=FIXED["weed_volume"],
                     filer_port=FIXED["weed_filer"], admin_port=FIXED["weed_admin"]).command()
    model = model_command(FIXED["model"], _rel(MODEL_SCRIPT))
    lines = [
        "# The processes of `python -m deploy.local.fleet`, on fixed ports, for honcho/foreman.",
        "# Generated by `python -m deploy.local.fleet --procfile`; from the repository root, with",
        "# the venv's bin/ on PATH:",
        "#   python -m deploy.local.fleet --dotenv > .env",
        "#   honcho -f deploy/local/Procfile -d . start -c worker=3",
        f"temporal: mkdir -p {PROCFILE_STATE} && exec temporal {' '.join(temporal[1:])}",
        f"s3: mkdir -p {PROCFILE_STATE}/s3 && exec weed {' '.join(weed[1:])}"
        f" -bucket={DEFAULT_BUCKET},{PAYLOAD_BUCKET}",
        f"model: python {' '.join(model[1:])}",
        "worker: python worker.py",
    ]
    return "\n".join(lines) + "\n"


def dotenv_text() -> str:
    env = stack_env(FIXED["temporal"], FIXED["s3"], FIXED["model"])
    return "".join(f"{k}={v}\n" for k, v in {**env, "PYTHONUNBUFFERED": "1"}.items())


# -- CLI ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.local.fleet", description=(
        "Temporal dev server, SeaweedFS, the scripted model server and N switchback workers."))
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--state-dir", type=Path, default=Path(PROCFILE_STATE))
    parser.add_argument("--task-queue", default="switchback")
    parser.add_argument("--temporal-port", type=int, default=0, help="0: a free port")
    parser.add_argument("--ui-port", type=int, default=0)
    parser.add_argument("--s3-port", type=int, default=0)
    parser.add_argument("--model-port", type=int, default=0)
    parser.add_argument("--no-restart", action="store_true", help="leave dead workers dead")
    parser.add_argument("--procfile", action="store_true", help="print the Procfile and exit")
    parser.add_argument("--dotenv", action="store_true", help="print the Procfile's .env")
    args = parser.parse_args(argv)
    if args.procfile or args.dotenv:
        print(procfile_text() if args.procfile else dotenv_text(), end="")
        return 0

    stop = False

    def on_signal(*_: object) -> None:
        nonlocal stop
        stop = True
    signal.signal(signal.SIGTERM, on_signal)
    fleet = Fleet(args.workers, args.state_dir, args.task_queue, args.temporal_port,
                  args.ui_port, args.s3_port, args.model_port)
    print(f"starting Temporal, SeaweedFS, the scripted model and {args.workers} workers ...",
          flush=True)
    try:
        fleet.start()
        assert fleet.temporal is not None
        env_file = fleet.state_dir / "env"
        env_file.write_text("".join(f"export {k}={v}\n" for k, v in fleet.env().items()))
        pids = " ".join(str(p.pid) for p in fleet.procs)
        print(f"fleet is up\n  Temporal: {fleet.temporal.address}  web UI {fleet.temporal.ui_url}\n"
              f"  workers:  {args.workers} on task queue '{args.task_queue}' (pids {pids})\n"
              f"  logs:     {fleet.logs}\n  env:      source {env_file}\n"
              "  stop with Ctrl-C", flush=True)
        while not stop:
            time.sleep(1)
            if not args.no_restart:
                for i in fleet.restart_dead():
                    print(f"worker {i} exited; started pid {fleet.procs[i].pid}", flush=True)
    except KeyboardInterrupt:
        pass
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        print("stopping the fleet ...", flush=True)
        fleet.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
