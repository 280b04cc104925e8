"""S3 access for workspaces: async methods over a thread pool, errors sorted once.

Any S3-compatible endpoint works (SeaweedFS, MinIO, R2, AWS): the endpoint, region and
addressing style come from the environment and the AWS profile (s3_wire.settings),
credentials from botocore's chain (the standard AWS variables, profiles, roles). Requests
are signed and sent by `S3Wire` (s3_wire.py: a third of boto3's CPU per request, and no
boto3 client to build). One retry at most per request: Temporal owns retries.

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
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from temporalio.exceptions import ApplicationError

from switchback.activities.storage.content_cache import DEFAULT_MAX_BYTES, ContentCache
from switchback.activities.storage.s3_wire import S3ConnectionError, S3Error, S3Wire, settings

T = TypeVar("T")
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
        self.endpoint_url, region, addressing = settings(endpoint_url)
        self._wire = S3Wire(self.endpoint_url, region, max_threads, addressing=addressing)
        self._pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="s3")
        self._buckets: set[str] = set()
        self.contents = ContentCache(cache_bytes)  # get_cached's, by (bucket, key, ETag)

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        self._wire.close()

    async def _run(self, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, fn)

    async def get(self, bucket: str, key: str) -> bytes | None:
        found = await self.get_object(bucket, key)
        return None if found is None else found[0]

    async def get_object(self, bucket: str, key: str) -> tuple[bytes, str] | None:
        """(body, ETag) or None."""
        def op() -> tuple[bytes, str] | None:
            with _sorted():
                a = self._wire.get(bucket, key)
                return None if a is None else (a.body, a.etag)
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
            with _sorted(key=key):
                a = self._wire.head(bucket, key)
                return None if a is None else a.etag
        return await self._run(op)

    async def exists(self, bucket: str, key: str) -> bool:
        return await self.head(bucket, key) is not None

    async def put(self, bucket: str, key: str, data: bytes,
                  content_type: str = "application/octet-stream", *,
                  if_none_match: bool = False, if_match: str | None = None) -> str:
        """Store `data`; its new ETag. Conditional (see the module docstring)."""
        headers = {"content-type": content_type}
        if if_none_match:
            headers["if-none-match"] = "*"
        if if_match is not None:
            headers["if-match"] = f'"{if_match}"'
        return await self._run(lambda: self._put_sync(bucket, key, data, headers))

    def _put_sync(self, bucket: str, key: str, data: bytes, headers: dict[str, str]) -> str:
        """The PUT itself, in the pool's thread (a stalled request stalls here)."""
        with _sorted(missing_is_mismatch="if-match" in headers, key=key):
            return self._wire.put(bucket, key, data, headers).etag

    async def delete(self, bucket: str, key: str, *, if_match: str | None = None) -> None:
        def op() -> None:
            with _sorted(missing_is_mismatch=if_match is not None, key=key):
                self._wire.delete(bucket, key, {} if if_match is None
                                  else {"if-match": f'"{if_match}"'})
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
            start_after: str | None = None
            token: str | None = None
            if limit <= 0:
                return out
            with _sorted():
                while True:
                    found, next_token = self._wire.list_page(
                        bucket, prefix, min(1000, limit - len(out)), start_after, token)
                    jump = None
                    for key, size, etag in found:
                        jump = skip(key) if skip is not None else None
                        if jump is not None:
                            break
                        out.append(ObjectInfo(key, size, etag))
                        if len(out) >= limit:
                            return out
                    if jump is not None:  # past every key under the folder
                        start_after, token = jump + _LAST_CHAR, None
                    elif next_token:
                        token = next_token
                    else:
                        return out
        return await self._run(op)

    async def copy(self, bucket: str, source: str, target: str,
                   source_etag: str | None = None) -> None:
        """Server-side copy within a bucket (no download); only of the version with
        `source_etag` if given (else PreconditionFailed, a missing source too)."""
        def op() -> None:
            with _sorted(missing_is_mismatch=source_etag is not None, key=target):
                self._wire.copy(bucket, source, target, {} if not source_etag else
                                {"x-amz-copy-source-if-match": f'"{source_etag}"'})
        await self._run(op)

    async def ensure_bucket(self, bucket: str) -> None:
        if bucket in self._buckets:
            return

        def op() -> None:
            with _sorted():
                if self._wire.head(bucket, "") is None:  # HeadBucket: 404 when there is none
                    self._wire.create_bucket(bucket)
        await self._run(op)
        self._buckets.add(bucket)


@contextmanager
def _sorted(*, missing_is_mismatch: bool = False, key: str = "") -> Iterator[None]:
    """S3Wire's errors as S3Store's. Endpoint down, 5xx, throttling, timeouts, conflicting
    concurrent requests (409): StorageUnavailable, retryable. A failed condition:
    PreconditionFailed (a 404 too on a request conditional on a version: AWS answers If-Match
    on a missing key so). A key S3 refuses: KeyRejected. Other 3xx/4xx (access denied, no
    such bucket, a bucket in another region): non-retryable, naming the problem."""
    try:
        yield
    except S3ConnectionError as e:
        raise StorageUnavailable(f"S3 connection: {' '.join(str(e).split())[:300]}") from e
    except S3Error as e:
        text = f"S3 {' '.join(str(e).split())[:300]}"
        if e.status == 412 or e.code == "PreconditionFailed" or (
                missing_is_mismatch and e.status == 404):
            raise PreconditionFailed(text) from e
        if e.status == 400 and (e.code in _KEY_ERRORS or e.code == "400"):
            # (a HEAD answer has no body to name the problem: the status alone)
            raise KeyRejected(f"S3 refused the key {key[:80]!r}: {text}") from e
        if 300 <= e.status < 500 and e.status not in (408, 409, 429):
            # (3xx: AWS's PermanentRedirect for a bucket in another region than AWS_REGION)
            raise ApplicationError(text, type="StorageRejected", non_retryable=True) from e
        raise StorageUnavailable(text) from e


_KEY_ERRORS = {"KeyTooLongError", "InvalidObjectName", "InvalidURI", "InvalidArgument"}
