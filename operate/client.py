"""The client side's connection to Temporal, shared by the CLI, the worker and the tests.

`connect()` reads Temporal's standard client configuration (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, profiles, TLS, API key); with an S3 store, payloads above the
threshold go to S3 (activities/storage/payloads.py) and `SWITCHBACK_CODEC_KEYS`
encrypts them (codec/). Nothing here imports workflow or activity code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from temporalio.client import Client
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime

from switchback import telemetry
from switchback.activities.storage.payloads import data_converter, payload_settings
from switchback.activities.storage.s3 import S3Store
from switchback.codec import codec_from_env, with_codec

DEFAULT_ADDRESS = "127.0.0.1:7233"  # the dev server's (python -m switchback.devstack up)
DEFAULTED = "the default: no TEMPORAL_ADDRESS, no address in a profile"
UI = os.environ.get("SWITCHBACK_UI_URL", "http://127.0.0.1:8233")


@dataclass(frozen=True)
class Target:
    """The Temporal server and namespace a client connects to, and where each came from:
    the environment, a profile of Temporal's config file, or the default."""

    address: str
    address_from: str
    namespace: str
    namespace_from: str

    @property
    def defaulted(self) -> bool:
        return self.address_from == DEFAULTED

    def __str__(self) -> str:
        return (f"{self.address} ({self.address_from}), namespace '{self.namespace}' "
                f"({self.namespace_from})")


def target(cfg: Mapping[str, object] | None = None) -> Target:
    """Where `connect()` goes (`cfg`: Temporal's client configuration, loaded if None)."""
    if cfg is None:
        cfg = ClientConfig.load_client_connect_config()
    profile = os.environ.get("TEMPORAL_PROFILE") or "default"
    file = ("TEMPORAL_CONFIG_FILE" if os.environ.get("TEMPORAL_CONFIG_FILE")
            else "Temporal's config file")
    from_profile = f"profile '{profile}' of {file}"

    def source(variable: str, key: str, default: tuple[str, str]) -> tuple[str, str]:
        if os.environ.get(variable):
            return str(cfg.get(key) or os.environ[variable]), variable
        if cfg.get(key):
            return str(cfg[key]), from_profile
        return default
    address, address_from = source("TEMPORAL_ADDRESS", "target_host",
                                   (DEFAULT_ADDRESS, DEFAULTED))
    namespace, namespace_from = source("TEMPORAL_NAMESPACE", "namespace",
                                       ("default", "the default"))
    return Target(address, address_from, namespace, namespace_from)


class TemporalUnreachable(RuntimeError):
    """No connection to Temporal: says the address and namespace tried, where they came
    from, and why (one line)."""

    def __init__(self, where: Target, error: BaseException) -> None:
        text = " ".join(str(error).split())
        refused = re.search(r"connection refused|ConnectionRefused", text, re.I)
        why = "connection refused" if refused else text[:240]
        super().__init__(f"cannot reach Temporal at {where}: {why}")
        self.target = where
BUCKET = os.environ.get("SWITCHBACK_BUCKET", "switchback")  # a job that recorded no bucket


async def job_workspace(client: Client | None, job_id: str) -> tuple[str, str]:
    """(bucket, key prefix) of a job's files, as the job recorded them in its memo
    (`progress.workspace`: s3://<bucket>/<prefix>/); SWITCHBACK_BUCKET and the job id for a
    job that recorded none, or when Temporal cannot say."""
    if client is not None:
        try:
            memo = await (await client.get_workflow_handle(job_id).describe()).memo()
            where = str((memo.get("progress") or {}).get("workspace") or "")
        except Exception:  # noqa: BLE001 - no such job (any more), Temporal down: the default
            where = ""
        if where.startswith("s3://") and "/" in where[5:]:
            bucket, prefix = where[5:].split("/", 1)
            prefix = prefix.rstrip("/")
            # only the job's own prefix (or a nested child's in its parent's workspace), never
            # the payload bucket: a memo anyone could have set says no more than that
            if (bucket and bucket != payload_settings()[0] and ".." not in prefix.split("/")
                    and (prefix == job_id or prefix.endswith(f"/subjobs/{job_id}"))):
                return bucket, prefix
    return BUCKET, job_id


async def try_connect(s3: S3Store | None = None) -> Client | None:
    """A client, or None when Temporal cannot be reached (commands that can do without)."""
    try:
        return await connect(s3)
    except Exception:  # noqa: BLE001 - any failure to connect: go on without
        return None


async def connect(s3: S3Store | None = None, runtime: Runtime | None = None) -> Client:
    """A client from Temporal's standard env/profile configuration (127.0.0.1:7233 when
    neither names an address); TemporalUnreachable when it cannot connect."""
    cfg = ClientConfig.load_client_connect_config()
    where = target(cfg)
    cfg.setdefault("target_host", DEFAULT_ADDRESS)
    converter = with_codec(data_converter(s3), codec_from_env())
    try:
        return await Client.connect(**cfg, data_converter=converter, runtime=runtime,
                                    interceptors=telemetry.interceptors_from_env())
    except RuntimeError as e:  # the SDK's "Failed client connect: ..."
        raise TemporalUnreachable(where, e) from None


def ui_link(client: Client, job_id: str) -> str:
    return f"{UI}/namespaces/{client.namespace}/workflows/{job_id}"
