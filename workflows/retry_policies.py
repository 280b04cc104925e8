"""A config's retry settings (`llm.retry`, `tools.retry`, `workspace.retry`) as Temporal's
retry policy: the config states them in Temporal's shape, durations in seconds."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from switchback.workflows.contract.config import RetrySettings


def retry_policy(settings: RetrySettings) -> RetryPolicy:
    longest = settings.maximum_interval_seconds
    return RetryPolicy(initial_interval=timedelta(seconds=settings.initial_interval_seconds),
                       backoff_coefficient=settings.backoff_coefficient,
                       maximum_interval=timedelta(seconds=longest) if longest else None,
                       maximum_attempts=settings.maximum_attempts)
