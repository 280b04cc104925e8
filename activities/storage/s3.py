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

from activities.storage import fast_listing
from activities.storage.content_cache import DEFAULT_MAX_BYTES, ContentCache

T = TypeVar("T")
_MISSING = {"NoSuchKey", "404", "NotFound"}
UNLIMITED = 1 << 40  # a `list` limit that means every object
_LAST_CHAR = "\U0010ffff"  # sorts after every other character of a key (UTF-8 order)


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
    def __init__(self, endpoint_url: str | None = None, max_threads: int = 64,
                 cache_bytes: int = DEFAULT_MAX_BYTES) -> None:
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
        fast_listing.install(self._client)
        self._pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="s3")
        self._buckets: set[str] = set()
        self.contents = ContentCache(cache_bytes)  # get_cached's, by (bucket, key, ETag)

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

    async def get_cached(self, bucket: str, key: str, etag: str) -> tuple[bytes, str] | None:
        """(body, ETag) of `key` at the version `etag` a listing just showed, from the
        worker's content cache when it holds that version (content_cache.py), else one GET
        (whose answer is kept: the version it finds, which may be newer). None if missing."""
        found = self.contents.get(bucket, key, etag)
        if found is not None:
            return found, etag
        got = await self.get_object(bucket, key)
        if got is not None:
            self.contents.put(bucket, key, got[1], got[0])
        return got

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

    async def list(self, bucket: str, prefix: str, limit: int = 10_000, *,
                   skip: Callable[[str], str | None] | None = None) -> list[ObjectInfo]:
        """Up to `limit` objects under `prefix`, in key order, with size and ETag.

        `skip(key)` may name a folder (a key prefix ending in '/') the key lies in whose
        objects the caller does not want: the listing then jumps past the whole folder
        (StartAfter) instead of paging through it, so a folder of any size costs one request.
        Each request asks for no more keys than are still wanted."""
        def op() -> list[ObjectInfo]:
            out: list[ObjectInfo] = []
            args: dict = {}
            if limit <= 0:
                return out
            try:
                while True:
                    r = self._client.list_objects_v2(
                        Bucket=bucket, Prefix=prefix, MaxKeys=min(1000, limit - len(out)),
                        **args)
                    jump = None
                    found = r.get("FastContents")  # fast_listing.py read them
                    if found is None:
                        found = [(o["Key"], o["Size"], o.get("ETag", "").strip('"'))
                                 for o in r.get("Contents", [])]
                    for key, size, etag in found:
                        jump = skip(key) if skip is not None else None
                        if jump is not None:
                            break
                        out.append(ObjectInfo(key, size, etag))
                        if len(out) >= limit:
                            return out
                    if jump is not None:  # past every key under the folder
                        args = {"StartAfter": jump + _LAST_CHAR}
                    elif r.get("IsTruncated") and r.get("NextContinuationToken"):
                        args = {"ContinuationToken": r["NextContinuationToken"]}
                    else:
                        return out
            except (ClientError, BotoCoreError) as e:
                raise _unavailable(e) from e
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
