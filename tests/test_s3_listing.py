"""S3Store.list on a real SeaweedFS: keys come back exactly as written (the answer is read
by s3_wire.py, URL-decoded as botocore does), sizes and ETags included, and a `skip`
folder is jumped over whatever its size."""

from __future__ import annotations

import uuid

BUCKET = "switchback"
ODD = ["a b.md", "plus+sign.md", "pct%20kept.md", "ümlaut/ö.md", "amp&lt;.md", "tab\tx.md",
       "quote\"'.md", "emoji-\U0001F600.md"]


async def test_odd_keys_list_exactly_with_size_and_etag(s3, boto3_s3):
    root = f"list-{uuid.uuid4().hex[:8]}/"
    etags = {}
    for i, name in enumerate(ODD):
        etags[root + name] = await s3.put(BUCKET, root + name, b"x" * i)
    listed = await s3.list(BUCKET, root)
    assert [o.key for o in listed] == sorted(etags, key=lambda k: k.encode())
    assert {o.key: (o.size, o.etag) for o in listed} == {
        k: (ODD.index(k[len(root):]), e) for k, e in etags.items()}
    raw = boto3_s3.list_objects_v2(Bucket=BUCKET, Prefix=root)  # boto3 reads the same
    assert [(o["Key"], o["Size"], o["ETag"].strip('"')) for o in raw["Contents"]] == [
        (o.key, o.size, o.etag) for o in listed]


async def test_a_skipped_folder_is_jumped_over_and_limits_hold(s3):
    root = f"list-{uuid.uuid4().hex[:8]}/"
    for name in ["a.md", "skip/1", "skip/2", "skip/\U0010fffe", "skipper.md", "z.md"]:
        await s3.put(BUCKET, root + name, b"x")
    seen: list[str] = []

    def skip(key: str) -> str | None:
        seen.append(key)
        return root + "skip/" if key.startswith(root + "skip/") else None
    listed = [o.key[len(root):] for o in await s3.list(BUCKET, root, skip=skip)]
    assert listed == ["a.md", "skipper.md", "z.md"]
    assert [k[len(root):] for k in seen if "skip/" in k] == ["skip/1"]  # one look, then past
    assert [o.key[len(root):] for o in await s3.list(BUCKET, root, limit=2)] == ["a.md",
                                                                                 "skip/1"]
