"""The application's own activities (nothing of switchback's): the file name Temporal's
tutorials give them, which switchback's wheel must not shadow."""

from __future__ import annotations

from temporalio import activity


@activity.defn
async def greeting(name: str) -> str:
    return f"Hello, {name}!"
