"""Where a job's documents may come from: the job input names them, the operator decides.

    inline   {"name": "a.md", "text": "..."} or {"name": "a.pdf", "base64": "..."}
    a path   relative to the job's config folder (configs/<job>/, e.g. the config's own
             `documents:`), or absolute inside that folder or inside a document root
             the operator listed (SWITCHBACK_DOCUMENT_ROOTS, separated by ':' or ',';
             none by default)

A path is resolved (symlinks too) before it is checked, so a link out of a root leads
nowhere; /proc, /sys, /dev, /etc and /run are refused even under a listed root (the config
folder may itself live under /etc, as in deploy/k8s). It must
be a regular file no larger than `limits.max_file_bytes`. `s3://` references are refused:
a job reaches no bucket or prefix but its own (an S3 document is given inline; the data
converter moves large payloads to S3 by itself). `starter.py start --document FILE`
sends the file's content inline.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from switchback.activities.config_roots import config_path

NEVER = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/etc", "/run", "/var/run"))


class DocumentRefused(ValueError):
    """A document the job may not have (or that does not exist): the message says why."""


def document_roots() -> list[Path]:
    listed = os.environ.get("SWITCHBACK_DOCUMENT_ROOTS") or ""
    return [Path(p).resolve() for p in re.split(r"[:,]", listed) if p.strip()]


def local_document(path: str, config_folder: str | None, max_bytes: int) -> Path:
    """The checked, resolved file for a document `path` from the job (DocumentRefused if not)."""
    if "://" in path:
        raise DocumentRefused(f"'{path}': URLs and s3:// references are not accepted; give the "
                              "content inline (text or base64) or a path in the job's config "
                              "folder")
    if any(ch in path for ch in "\x00\n\r") or ".." in Path(path).parts:
        raise DocumentRefused(f"'{path}': a document path may not contain '..' or control "
                              "characters")
    where = _where(config_folder)
    if Path(path).is_absolute():
        candidate = Path(path)
    elif config_folder:
        candidate = config_path(config_folder) / path
    else:
        raise DocumentRefused(f"'{path}': a relative path is read from the job's config folder "
                              "and this config has none (it extends no named config); give "
                              "the content inline")
    resolved = candidate.resolve()
    folder = config_path(config_folder).resolve() if config_folder else None
    in_folder = folder is not None and resolved.is_relative_to(folder)  # may be under /etc
    in_root = (any(resolved.is_relative_to(r) for r in document_roots())
               and not any(resolved.is_relative_to(n) for n in NEVER))
    if not (in_folder or in_root):
        raise DocumentRefused(f"'{path}' is not inside {where}")
    if not resolved.exists():
        raise DocumentRefused(f"'{path}' does not exist in {where}")
    if not resolved.is_file():
        raise DocumentRefused(f"'{path}' is not a regular file")
    size = resolved.stat().st_size
    if size > max_bytes:
        raise DocumentRefused(f"'{path}' has {size} bytes, more than limits.max_file_bytes "
                              f"({max_bytes})")
    return resolved


def _where(config_folder: str | None) -> str:
    roots = os.environ.get("SWITCHBACK_DOCUMENT_ROOTS") or "none"
    folder = f"the job's config folder (configs/{config_folder}) or " if config_folder else ""
    return f"{folder}a document root the operator listed (SWITCHBACK_DOCUMENT_ROOTS: {roots})"
