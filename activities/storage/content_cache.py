"""A worker's cache of object contents by version: (bucket, key, ETag) -> bytes, LRU, bounded.

An S3 object's ETag changes whenever its content does, and a listing returns every key's
ETag, so a content found under (bucket, key, ETag) is that object's content for as long as
a listing shows that ETag: the cache is never stale for a caller that looks keys up with
the ETags of a listing it just made. No write path has to invalidate it - a changed file
has a new ETag and misses; a deleted file is not in the listing and is never asked for;
old versions age out (least recently used first) once `max_bytes` is exceeded.

It is one per S3Store, so one per worker process, shared by every job of that worker:
the key includes the job's prefix, and callers look up only keys of their own listing.
"""

from __future__ import annotations

from collections import OrderedDict

DEFAULT_MAX_BYTES = 64 << 20
MAX_ENTRY_FRACTION = 8  # an object over max_bytes / 8 is not kept (it would evict too much)


class ContentCache:
    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, bucket: str, key: str, etag: str) -> bytes | None:
        found = self._entries.get((bucket, key, etag))
        if found is not None:
            self._entries.move_to_end((bucket, key, etag))
        return found

    def put(self, bucket: str, key: str, etag: str, data: bytes) -> None:
        if not etag or len(data) > self.max_bytes // MAX_ENTRY_FRACTION:
            return
        entry = (bucket, key, etag)
        old = self._entries.pop(entry, None)
        if old is not None:
            self.bytes -= len(old)
        self._entries[entry] = data
        self.bytes += len(data)
        while self.bytes > self.max_bytes and self._entries:
            _, dropped = self._entries.popitem(last=False)
            self.bytes -= len(dropped)
