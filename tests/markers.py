"""A local activity's marker in a history (`core_local_activity`): what it records, read from
unencoded payloads (tests and benchmarks run without a codec; `operate/job_history.py` reads
a job's markers through the client's codec)."""

from __future__ import annotations

import json
from typing import Any

LOCAL_ACTIVITY_MARKER = "core_local_activity"


def local_activity_data(event: Any) -> dict | None:
    """What the marker of a local activity records (its type, attempt, ...); None for any
    other event."""
    if not event.HasField("marker_recorded_event_attributes"):
        return None
    attrs = event.marker_recorded_event_attributes
    if attrs.marker_name != LOCAL_ACTIVITY_MARKER or "data" not in attrs.details:
        return None
    data = json.loads(attrs.details["data"].payloads[0].data)
    return data if isinstance(data, dict) else None


def local_activity(event: Any) -> str | None:
    """The activity type a local-activity marker records (None for other events)."""
    data = local_activity_data(event)
    return None if data is None else str(data["activity_type"])
