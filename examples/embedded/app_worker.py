"""An application's own worker with switchback in it: one plugin line.

    PYTHONPATH=<the switchback checkout> python app_worker.py

Its client keeps its own codec and failure converter (the plugin makes only its payload
converter pydantic's); its worker runs, besides the application's own `Greet` workflow,
switchback's `AgentJob` with every activity it needs, all on the one task queue
(APP_TASK_QUEUE, default my-app). The operator's settings (S3, model endpoints, tool
servers, buckets) come from the environment as for switchback's own worker.py
(docs/operating.md). Start a job on that queue like any other:

    temporal workflow start --type AgentJob --task-queue my-app --workflow-id job-1 \
        --input '{"config": "notes"}'
"""

from __future__ import annotations

import asyncio
import os

from greet import Greet, greeting
from temporalio.client import Client
from temporalio.worker import Worker

from switchback.plugin import SwitchbackPlugin


async def main() -> None:
    client = await Client.connect(os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
                                  namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
                                  plugins=[SwitchbackPlugin()])
    worker = Worker(client, task_queue=os.environ.get("APP_TASK_QUEUE", "my-app"),
                    workflows=[Greet], activities=[greeting])
    print("app worker started", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main())
