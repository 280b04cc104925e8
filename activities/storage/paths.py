"""Workspace paths: relative, inside the job's prefix, storable, and never reserved.

`check_path` is the one gate every tool path goes through. It returns the
normalised relative path or raises `PathError` with a code the model can read.

Storable means any S3-compatible store takes the key `<job id>/<path>`: S3 limits a
key to 1,024 bytes of UTF-8 (a job id takes up to 201 of them) and SeaweedFS a
folder or file name to 255 bytes, so a path is at most MAX_PATH_BYTES bytes and each
of its names at most MAX_NAME_BYTES - counted in bytes, not characters (500 CJK
characters are 1,500 bytes). Text that is not valid Unicode (lone surrogates),
control characters (NUL, C0, DEL, C1), line and paragraph separators and
bidirectional overrides are refused.
"""

from __future__ import annotations

import posixpath
import unicodedata

from switchback.workflows.contract.layout import INTERNAL, is_internal

MAX_PATH_BYTES = 512
MAX_NAME_BYTES = 255
_BIDI = {*range(0x202A, 0x202F), *range(0x2066, 0x206A)}  # embeddings, overrides, isolates


class PathError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def check_path(path: object, *, allow_root: bool = False) -> str:
    """Validate a model-supplied workspace path; return it normalised ('' = the root)."""
    if not isinstance(path, str):
        raise PathError("invalid_path", f"path must be a string, got {type(path).__name__}")
    _check_characters(path)
    p = path.strip()
    if p in ("", ".", "./"):
        if allow_root:
            return ""
        raise PathError("invalid_path", "path is empty; give a file path relative to the "
                        "workspace, e.g. 'notes/plan.md'")
    size = len(p.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise PathError("path_too_long", f"path is {size} bytes of UTF-8 ({len(p)} characters);"
                        f" at most {MAX_PATH_BYTES} bytes are allowed")
    if "\\" in p:
        raise PathError("invalid_path", "path contains a backslash; use '/' between folders")
    if p.startswith("/") or p.startswith("~") or (len(p) > 1 and p[1] == ":"):
        raise PathError("path_outside_workspace",
                        f"'{p}' is absolute; paths are relative to the workspace root")
    if "://" in p:
        raise PathError("path_outside_workspace", f"'{p}' is a URL, not a workspace path")
    parts = [s for s in p.split("/") if s not in ("", ".")]
    if ".." in parts:
        raise PathError("path_outside_workspace",
                        f"'{p}' contains '..'; paths may not leave the workspace")
    for name in parts:
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            raise PathError("path_too_long", f"the name '{name[:40]}...' is "
                            f"{len(name.encode('utf-8'))} bytes of UTF-8; a folder or file "
                            f"name may have at most {MAX_NAME_BYTES}")
    norm = posixpath.join(*parts) if parts else ""
    if not norm:
        if allow_root:
            return ""
        raise PathError("invalid_path", "path names no file")
    if is_internal(norm):  # .switchback/, and a nested job's children's
        raise PathError("reserved_path", f"'{INTERNAL}/' is reserved for switchback itself")
    return norm


def _check_characters(path: str) -> None:
    for i, ch in enumerate(path):
        cat = unicodedata.category(ch)
        if cat == "Cs":
            raise PathError("invalid_path", f"path contains text that is not valid Unicode (a "
                            f"lone surrogate U+{ord(ch):04X} at character {i})")
        if cat in ("Cc", "Zl", "Zp") or ord(ch) in _BIDI or ch in "\ufffe\uffff":
            raise PathError("invalid_path", f"path contains a NUL or control character "
                            f"(U+{ord(ch):04X} at character {i})")
