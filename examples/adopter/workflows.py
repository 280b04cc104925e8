"""The application's own workflows: `Greet` runs its activity; `GreetingCard` asks an agent
for a card, as a child `AgentJob` on the same task queue, with a config from the
application's own configs folder (configs/greeting-card)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities import greeting

from switchback.workflows.contract import JobInput, JobResult


@workflow.defn
class Greet:
    @workflow.run
    async def run(self, name: str) -> str:
        return await workflow.execute_activity(greeting, name,
                                               start_to_close_timeout=timedelta(seconds=10))


@workflow.defn
class GreetingCard:
    @workflow.run
    async def run(self, name: str) -> str:
        hello = await workflow.execute_activity(greeting, name,
                                                start_to_close_timeout=timedelta(seconds=10))
        job: JobResult = await workflow.execute_child_workflow(
            "AgentJob", JobInput(config="greeting-card", instructions=f"The card says: {hello}"),
            id=f"{workflow.info().workflow_id}-card", result_type=JobResult)
        return job.status
