"""The application's own workflow and activity (nothing of switchback's)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn
async def greeting(name: str) -> str:
    return f"Hello, {name}!"


@workflow.defn
class Greet:
    @workflow.run
    async def run(self, name: str) -> str:
        return await workflow.execute_activity(greeting, name,
                                               start_to_close_timeout=timedelta(seconds=10))
