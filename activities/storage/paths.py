"""Workspace paths: relative, inside the job's prefix, and never reserved.

`check_path` is the one gate every tool path goes through. It returns the
normalised relative path or raises `PathError` with a code the model can read.
"""

from __future__ import annotations

import posixpath
import unicodedata

from workflows.contract.layout import INTERNAL, is_internal

MAX_PATH_CHARS = 512


class PathError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def check_path(path: object, *, allow_root: bool = False) -> str:
    """Validate a model-supplied workspace path; return it normalised ('' = the root)."""
    if not isinstance(path, str):
        raise PathError("invalid_path", f"path must be a string, got {type(path).__name__}")
    if any(unicodedata.category(ch) == "Cc" for ch in path):
        raise PathError("invalid_path", "path contains a NUL or control character")
    p = path.strip()
    if p in ("", ".", "./"):
        if allow_root:
            return ""
        raise PathError("invalid_path", "path is empty; give a file path relative to the "
                        "workspace, e.g. 'notes/plan.md'")
    if len(p) > MAX_PATH_CHARS:
        raise PathError("invalid_path", f"path is longer than {MAX_PATH_CHARS} characters")
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
    norm = posixpath.join(*parts) if parts else ""
    if not norm:
        if allow_root:
            return ""
        raise PathError("invalid_path", "path names no file")
    if is_internal(norm):  # .switchback/, and a nested job's children's
        raise PathError("reserved_path", f"'{INTERNAL}/' is reserved for switchback itself")
    return norm
