"""The worker's content cache (activities/storage/content_cache.py): by (bucket, key, ETag),
bounded in bytes, least recently used out first; an object too large is not kept."""

from __future__ import annotations

from switchback.activities.storage.content_cache import ContentCache


def test_bounded_in_bytes_least_recently_used_out_first():
    c = ContentCache(max_bytes=800)  # entries up to 100 bytes
    for i in range(8):
        c.put("b", f"k{i}", "e", bytes(100))
    assert len(c) == 8 and c.bytes == 800
    assert c.get("b", "k0", "e") is not None  # k0 used: k1 is now the oldest
    c.put("b", "k8", "e", bytes(100))
    assert c.get("b", "k1", "e") is None and c.get("b", "k0", "e") is not None
    assert c.bytes == 800


def test_a_version_is_its_own_entry_and_large_or_untagged_objects_are_not_kept():
    c = ContentCache(max_bytes=800)
    c.put("b", "k", "v1", b"one")
    c.put("b", "k", "v2", b"two")
    assert c.get("b", "k", "v1") == b"one" and c.get("b", "k", "v2") == b"two"
    assert c.get("other", "k", "v1") is None
    c.put("b", "big", "e", bytes(101))
    c.put("b", "untagged", "", b"x")
    assert c.get("b", "big", "e") is None and c.get("b", "untagged", "") is None
    c.put("b", "k", "v1", b"one again")  # the same version put twice: counted once
    assert c.bytes == len(b"one again") + len(b"two")
