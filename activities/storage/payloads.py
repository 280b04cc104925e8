"""Large payloads go to S3, not into Temporal history: the data converter switchback uses.

Payloads at or above the threshold (`SWITCHBACK_PAYLOAD_THRESHOLD`, bytes, default
256 KiB) are stored by the SDK's external storage (`temporalio.converter.ExternalStorage`)
with its S3 driver in the bucket `SWITCHBACK_PAYLOAD_BUCKET` (default
`switchback-payloads`), on the same S3 endpoint as the workspaces; history keeps a
small reference. The objects are content-addressed and never deleted by switchback,
so they outlive the histories that reference them (set any lifecycle rule on that
bucket longer than your history retention). `SWITCHBACK_PAYLOAD_THRESHOLD=0` turns
external storage off.

The driver's client is an implementation of `S3StorageDriverClient` over S3Store (its
signed requests, in its thread pool) rather than the SDK's aioboto3 one: S3Store is already
the workspace's client, and aioboto3 would bring aiobotocore, which pins botocore to its
own narrow range and fights boto3's.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from temporalio.contrib.aws.s3driver import S3StorageDriver, S3StorageDriverClient
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, ExternalStorage

from switchback.activities.storage.s3 import S3Store
from switchback.codec.bounded_failures import BoundedFailureConverter

DEFAULT_BUCKET = "switchback-payloads"
DEFAULT_THRESHOLD = 256 * 1024


class StoreDriverClient(S3StorageDriverClient):
    def __init__(self, s3: S3Store) -> None:
        self.s3 = s3

    async def put_object(self, *, bucket: str, key: str, data: bytes) -> None:
        await self.s3.put(bucket, key, data)

    async def object_exists(self, *, bucket: str, key: str) -> bool:
        return await self.s3.exists(bucket, key)

    async def get_object(self, *, bucket: str, key: str) -> bytes:
        data = await self.s3.get(bucket, key)
        if data is None:
            raise KeyError(f"s3://{bucket}/{key} is missing")
        return data

    def describe(self) -> Mapping[str, str]:
        return {"endpoint": self.s3.endpoint_url or "AWS default"}


def payload_settings() -> tuple[str, int]:
    return (os.environ.get("SWITCHBACK_PAYLOAD_BUCKET") or DEFAULT_BUCKET,
            int(os.environ.get("SWITCHBACK_PAYLOAD_THRESHOLD") or DEFAULT_THRESHOLD))


def data_converter(s3: S3Store | None) -> DataConverter:
    """pydantic's converter with failures Temporal keeps whole (codec/bounded_failures.py), plus S3
    external storage when S3 is given and it is on."""
    converter = dataclasses.replace(pydantic_data_converter,
                                    failure_converter_class=BoundedFailureConverter)
    bucket, threshold = payload_settings()
    if s3 is None or threshold <= 0:
        return converter
    storage = ExternalStorage(drivers=[S3StorageDriver(StoreDriverClient(s3), bucket)],
                              payload_size_threshold=threshold)
    return dataclasses.replace(converter, external_storage=storage)
