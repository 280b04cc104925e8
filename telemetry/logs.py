"""Logging for switchback processes: plain text or one JSON object per line.

`configure_logging()` reads `SWITCHBACK_LOG_FORMAT` (`text`, the default, or `json`) and
`SWITCHBACK_LOG_LEVEL` (a level name or number, default `INFO`) and installs one handler
on the root logger (calling it again replaces that handler, never anyone else's).

A JSON line has `ts` (UTC, ISO 8601), `level`, `logger`, `message` and, when they are
known, `job_id`, `run_id`, `workflow_type`, `activity`, `attempt`, `phase`, `step`, `tool`
and `exc` (the formatted traceback). Where they come from:

- `job_id`, `run_id`, `workflow_type`: the `temporal_workflow` extra that
  `workflow.logger` puts on its records, or the `temporal_activity` extra of
  `activity.logger` (`workflow_id`, `workflow_run_id`); the SDK's copy of that dict at
  the end of the message (" ({...})") is dropped from `message`, as the fields carry it.
- `phase`, `step`: an `extra={"phase": 3, "step": 7}` the caller passes (workflow code
  does, see the wiring notes); in an activity, the phase of the request's conversation
  key (`phase_0003`) and the tool name, set by `SwitchbackActivityInterceptor` in
  `ACTIVITY_CONTEXT` for the duration of the activity.
- Any record may also pass `job_id` / `run_id` / `tool` as extras (e.g. the CLI).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any

FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Set by telemetry.tracing.SwitchbackActivityInterceptor while an activity runs:
# {"job_id": ..., "phase": 3, "tool": "write_file"} (keys only when known).
ACTIVITY_CONTEXT: ContextVar[dict[str, Any] | None] = ContextVar("switchback_activity",
                                                                 default=None)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, with the job's identity when the record carries it."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        wf = getattr(record, "temporal_workflow", None) or {}
        act = getattr(record, "temporal_activity", None) or {}
        for details in (wf, act):  # the SDK appends its dict to the message too
            suffix = f" ({details})"
            if details and message.endswith(suffix):
                message = message[:-len(suffix)]
        ctx = ACTIVITY_CONTEXT.get() or {}
        extra = record.__dict__
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": message,
            "job_id": extra.get("job_id") or wf.get("workflow_id") or act.get("workflow_id")
            or ctx.get("job_id"),
            "run_id": extra.get("run_id") or wf.get("run_id") or act.get("workflow_run_id"),
            "workflow_type": wf.get("workflow_type") or act.get("workflow_type"),
            "activity": act.get("activity_type"),
            "attempt": act.get("attempt") if act else None,
            "phase": extra.get("phase", ctx.get("phase")),
            "step": extra.get("step"),
            "tool": extra.get("tool") or ctx.get("tool"),
        }
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            out["exc"] = record.exc_text
        return json.dumps({k: v for k, v in out.items() if v is not None}, default=str,
                          ensure_ascii=False)


def _level(value: str | int | None) -> int:
    if value is None or value == "":
        return logging.INFO
    if isinstance(value, int) or str(value).isdigit():
        return int(value)
    level = logging.getLevelName(str(value).upper())
    if not isinstance(level, int):
        raise ValueError(f"SWITCHBACK_LOG_LEVEL={value!r}: use DEBUG, INFO, WARNING, ERROR "
                         "or a number")
    return level


def configure_logging(fmt: str | None = None, level: str | int | None = None,
                      stream: IO[str] | None = None) -> logging.Handler:
    """Install switchback's handler on the root logger; arguments override the environment.

    Returns the handler (tests remove it again). Raises ValueError on an unknown format
    or level, naming the variable.
    """
    fmt = (fmt or os.environ.get("SWITCHBACK_LOG_FORMAT") or "text").strip().lower()
    if fmt not in FORMATS:
        raise ValueError(f"SWITCHBACK_LOG_FORMAT={fmt!r}: use one of {', '.join(FORMATS)}")
    lvl = _level(level if level is not None else os.environ.get("SWITCHBACK_LOG_LEVEL"))
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    handler.switchback = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "switchback", False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(lvl)
    return handler
