"""S3 access for workspaces: one boto3 client, async methods, errors sorted once.

Any S3-compatible endpoint works (SeaweedFS, MinIO, R2, AWS): the endpoint comes
from `AWS_ENDPOINT_URL_S3` (boto3 reads it), credentials from the standard AWS
variables. botocore's own retries are kept minimal: Temporal owns retries.

Errors: a missing object is a normal answer (`None`); anything else - endpoint
down, 5xx, timeouts - raises `StorageUnavailable`, which activities let through so
that Temporal's retry policy applies.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from temporalio.exceptions import ApplicationError

T = TypeVar("T")
_MISSING = {"NoSuchKey", "404", "NotFound"}


class StorageUnavailable(RuntimeError):
    """S3 could not be reached or answered with a server error (retryable)."""


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int
    etag: str = ""


class S3Store:
    def __init__(self, endpoint_url: str | None = None, max_threads: int = 64) -> None:
        self.endpoint_url = endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or None
        self._client = boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint_url,
            region_name=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
            or "us-east-1",
            config=Config(s3={"addressing_style": "path"}, connect_timeout=3, read_timeout=30,
                          request_checksum_calculation="when_required",
                          response_checksum_validation="when_required",
                          retries={"mode": "standard", "max_attempts": 2},
                          max_pool_connections=max_threads))
        self._pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="s3")
        self._buckets: set[str] = set()

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        self._client.close()

    async def _run(self, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, fn)

    async def get(self, bucket: str, key: str) -> bytes | None:
        def op() -> bytes | None:
            try:
                return self._client.get_object(Bucket=bucket, Key=key)["Body"].read()
            except ClientError as e:
                if _code(e) in _MISSING:
                    return None
                raise _unavailable(e) from e
            except BotoCoreError as e:
                raise _unavailable(e) from e
        return await self._run(op)

    async def exists(self, bucket: str, key: str) -> bool:
        def op() -> bool:
            try:
                self._client.head_object(Bucket=bucket, Key=key)
                return True
            except ClientError as e:
                if _code(e) in _MISSING:
                    return False
                raise _unavailable(e) from e
            except BotoCoreError as e:
                raise _unavailable(e) from e
        return await self._run(op)

    async def put(self, bucket: str, key: str, data: bytes,
                  content_type: str = "application/octet-stream") -> None:
        def op() -> None:
            try:
                self._client.put_object(Bucket=bucket, Key=key, Body=data,
                                        ContentType=content_type)
            except (ClientError, BotoCoreError) as e:
                raise _unavailable(e) from e
        await self._run(op)

    async def delete(self, bucket: str, key: str) -> None:
        def op() -> None:
            try:
                self._client.delete_object(Bucket=bucket, Key=key)
            except (ClientError, BotoCoreError) as e:
                raise _unavailable(e) from e
        await self._run(op)

    async def list(self, bucket: str, prefix: str, limit: int = 10_000) -> list[ObjectInfo]:
        def op() -> list[ObjectInfo]:
            out: list[ObjectInfo] = []
            try:
                pages = self._client.get_paginator("list_objects_v2").paginate(
                    Bucket=bucket, Prefix=prefix)
                for page in pages:
                    for o in page.get("Contents", []):
                        out.append(ObjectInfo(o["Key"], o["Size"], o.get("ETag", "").strip('"')))
                        if len(out) >= limit:
                            return out
            except (ClientError, BotoCoreError) as e:
                raise _unavailable(e) from e
            return out
        return await self._run(op)

    async def copy(self, bucket: str, source: str, target: str) -> None:
        """Server-side copy within a bucket (no download)."""
        def op() -> None:
            try:
                self._client.copy_object(Bucket=bucket, Key=target,
                                         CopySource={"Bucket": bucket, "Key": source})
            except (ClientError, BotoCoreError) as e:
                raise _unavailable(e) from e
        await self._run(op)

    async def ensure_bucket(self, bucket: str) -> None:
        if bucket in self._buckets:
            return

        def op() -> None:
            try:
                self._client.head_bucket(Bucket=bucket)
            except ClientError as e:
                if _code(e) not in _MISSING and _code(e) != "NoSuchBucket":
                    raise _unavailable(e) from e
                try:
                    self._client.create_bucket(Bucket=bucket)
                except ClientError as e2:
                    if _code(e2) not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                        raise _unavailable(e2) from e2
            except BotoCoreError as e:
                raise _unavailable(e) from e
        await self._run(op)
        self._buckets.add(bucket)


def _code(e: ClientError) -> str:
    return str(e.response.get("Error", {}).get("Code", ""))


def _unavailable(e: Exception) -> Exception:
    """Endpoint down, 5xx, throttling, timeouts: retryable. Other 4xx (a key S3 refuses,
    access denied, no such bucket): non-retryable, naming the problem."""
    text = f"S3 {type(e).__name__}: {' '.join(str(e).split())[:300]}"
    status = (e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
              if isinstance(e, ClientError) else 0)
    if 400 <= status < 500 and status not in (408, 429):
        return ApplicationError(text, type="StorageRejected", non_retryable=True)
    return StorageUnavailable(text)
