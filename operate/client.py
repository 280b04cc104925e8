"""The client side's connection to Temporal, shared by the CLI, the worker and the tests.

`connect()` reads Temporal's standard client configuration (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, profiles, TLS, API key); with an S3 store, payloads above the
threshold go to S3 (activities/storage/payloads.py) and `SWITCHBACK_CODEC_KEYS`
encrypts them (codec/). Nothing here imports workflow or activity code.
"""

from __future__ import annotations

import os

from temporalio.client import Client
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime

import telemetry
from activities.storage.payloads import data_converter
from activities.storage.s3 import S3Store
from codec import codec_from_env, with_codec

UI = os.environ.get("SWITCHBACK_UI_URL", "http://127.0.0.1:8233")
BUCKET = os.environ.get("SWITCHBACK_BUCKET", "switchback")


async def connect(s3: S3Store | None = None, runtime: Runtime | None = None) -> Client:
    """A client from Temporal's standard env/profile configuration."""
    cfg = ClientConfig.load_client_connect_config()
    cfg.setdefault("target_host", "127.0.0.1:7233")
    converter = with_codec(data_converter(s3), codec_from_env())
    return await Client.connect(**cfg, data_converter=converter, runtime=runtime,
                                interceptors=telemetry.interceptors_from_env())


def ui_link(client: Client, job_id: str) -> str:
    return f"{UI}/namespaces/{client.namespace}/workflows/{job_id}"
