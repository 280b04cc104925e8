"""S3 access for workspaces: one boto3 client, async methods, errors sorted once.

Any S3-compatible endpoint works (SeaweedFS, MinIO, R2, AWS): the endpoint comes
from `AWS_ENDPOINT_URL_S3` (boto3 reads it), credentials from the standard AWS
variables. botocore's own retries are kept minimal: Temporal owns retries.

Errors: a missing object is a normal answer (`None`); endpoint down, 5xx, throttling,
timeouts raise `StorageUnavailable`, which activities let through so that Temporal's
retry policy applies; a key S3 refuses (too long, invalid) raises `KeyRejected`, other
4xx `StorageRejected` (both non-retryable).

Conditional writes fence late ("zombie") activity attempts: `put(..., if_none_match=True)`
creates a key only if it does not exist, `put(..., if_match=etag)` replaces only the
version this attempt saw, `delete(..., if_match=etag)` likewise; a failed condition
raises `PreconditionFailed`. `copy(..., source_etag=...)` copies only that version. These
are S3's If-None-Match / If-Match headers on PUT and DELETE (AWS S3, MinIO, Ceph and
SeaweedFS enforce them; tests/test_s3_conditions.py checks the server in use) and
x-amz-copy-source-if-match on copies. AWS answers If-Match on a missing key with 404, others
with 412: both are PreconditionFailed here. Concurrent conditional requests AWS answers
with 409 are retried.
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


class PreconditionFailed(RuntimeError):
    """A conditional request found another version of the object than it named."""


class KeyRejected(ApplicationError):
    """S3 refused the key itself (too long, invalid): no retry makes it acceptable."""

    def __init__(self, message: str) -> None:
        super().__init__(message, type="StorageRejected", non_retryable=True)


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
        found = await self.get_object(bucket, key)
        return None if found is None else found[0]

    async def get_object(self, bucket: str, key: str) -> tuple[bytes, str] | None:
        """(body, ETag) or None."""
        def op() -> tuple[bytes, str] | None:
            try:
                r = self._client.get_object(Bucket=bucket, Key=key)
                return r["Body"].read(), r.get("ETag", "").strip('"')
            except ClientError as e:
                if _code(e) in _MISSING:
                    return None
                raise _unavailable(e) from e
            except BotoCoreError as e:
                raise _unavailable(e) from e
        return await self._run(op)

    async def head(self, bucket: str, key: str) -> str | None:
        """The object's ETag, or None if there is none."""
        def op() -> str | None:
            try:
                return str(self._client.head_object(Bucket=bucket, Key=key)
                           .get("ETag", "")).strip('"')
            except ClientError as e:
                if _code(e) in _MISSING:
                    return None
                if _code(e) == "400":  # a HEAD answer has no body to name the problem
                    raise KeyRejected(f"S3 refused the key {key[:80]!r}: HTTP 400") from e
                raise _unavailable(e) from e
            except BotoCoreError as e:
                raise _unavailable(e) from e
        return await self._run(op)

    async def exists(self, bucket: str, key: str) -> bool:
        return await self.head(bucket, key) is not None

    async def put(self, bucket: str, key: str, data: bytes,
                  content_type: str = "application/octet-stream", *,
                  if_none_match: bool = False, if_match: str | None = None) -> str:
        """Store `data`; its new ETag. Conditional (see the module docstring)."""
        cond: dict = {}
        if if_none_match:
            cond["IfNoneMatch"] = "*"
        if if_match is not None:
            cond["IfMatch"] = f'"{if_match}"'
        return await self._run(lambda: self._put_sync(bucket, key, data, content_type, cond))

    def _put_sync(self, bucket: str, key: str, data: bytes, content_type: str,
                  cond: dict) -> str:
        """The PUT itself, in the pool's thread (a stalled request stalls here)."""
        try:
            r = self._client.put_object(Bucket=bucket, Key=key, Body=data,
                                        ContentType=content_type, **cond)
            return str(r.get("ETag", "")).strip('"')
        except ClientError as e:
            if "IfMatch" in cond and _code(e) in _MISSING:  # AWS: If-Match, no such key
                raise PreconditionFailed(f"S3 {key}: no such key to match") from e
            raise _unavailable(e) from e
        except BotoCoreError as e:
            raise _unavailable(e) from e

    async def delete(self, bucket: str, key: str, *, if_match: str | None = None) -> None:
        def op() -> None:
            try:
                self._client.delete_object(Bucket=bucket, Key=key, **(
                    {"IfMatch": f'"{if_match}"'} if if_match is not None else {}))
            except ClientError as e:
                if if_match is not None and _code(e) in _MISSING:
                    raise PreconditionFailed(f"S3 {key}: no such key to match") from e
                raise _unavailable(e) from e
            except BotoCoreError as e:
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

    async def copy(self, bucket: str, source: str, target: str,
                   source_etag: str | None = None) -> None:
        """Server-side copy within a bucket (no download); only of the version with
        `source_etag` if given (else PreconditionFailed)."""
        def op() -> None:
            try:
                self._client.copy_object(Bucket=bucket, Key=target,
                                         CopySource={"Bucket": bucket, "Key": source}, **(
                                             {"CopySourceIfMatch": f'"{source_etag}"'}
                                             if source_etag else {}))
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


_KEY_ERRORS = {"KeyTooLongError", "InvalidObjectName", "InvalidURI", "InvalidArgument"}


def _unavailable(e: Exception) -> Exception:
    """Endpoint down, 5xx, throttling, timeouts, conflicting concurrent requests: retryable.
    A failed condition: PreconditionFailed. A key S3 refuses: KeyRejected. Other 4xx
    (access denied, no such bucket): non-retryable, naming the problem."""
    text = f"S3 {type(e).__name__}: {' '.join(str(e).split())[:300]}"
    status = (e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
              if isinstance(e, ClientError) else 0)
    if status == 412 or (isinstance(e, ClientError) and _code(e) == "PreconditionFailed"):
        return PreconditionFailed(text)
    if status == 400 and isinstance(e, ClientError) and _code(e) in _KEY_ERRORS:
        return KeyRejected(text)
    if 400 <= status < 500 and status not in (408, 409, 429):
        return ApplicationError(text, type="StorageRejected", non_retryable=True)
    return StorageUnavailable(text)
