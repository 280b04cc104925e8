"""Apps on switchback's engine: workflows of your own that run AgentJobs as children, their
activities and their CLI commands, registered by an installed package (entry point groups
`switchback.apps` and `switchback.commands`). examples/documents is one (its DocumentPipeline
runs a creator job, then a validator job per requirement).

    # my_app/app.py
    from switchback.apps import App

    app = App(name="reports", workflows=[ReportPipeline],
              activities=lambda s3: [ReportActivities(s3).collect],
              coordinators=["ReportPipeline"])

    # pyproject.toml
    [project.entry-points."switchback.apps"]
    reports = "my_app.app:app"

Every workflow worker (worker.py, SwitchbackPlugin) registers each installed app's workflows
and activities beside AgentJob's, and calls its `close` when it stops. A workflow type named
in `coordinators` may read the workspaces of the jobs it started whose ids are `<its own
id>-<anything without a slash>` (the workspace guard refuses every other workflow's reach
into a job's prefix). Nothing here imports switchback's internals.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

APPS_GROUP = "switchback.apps"
COMMANDS_GROUP = "switchback.commands"


def _no_activities(s3: Any) -> Sequence[Callable[..., Any]]:
    return ()


@dataclass(frozen=True)
class App:
    """An app's part of a workflow worker."""

    name: str
    workflows: Sequence[type] = ()
    # the worker's workspace store (activities.storage.s3.S3Store) -> the app's activities
    activities: Callable[[Any], Sequence[Callable[..., Any]]] = _no_activities
    coordinators: Sequence[str] = ()  # workflow types that read their child jobs' workspaces
    close: Callable[[], Awaitable[None]] | None = None  # once, when the worker process stops


@dataclass(frozen=True)
class Command:
    """A `switchback <name>` command an app adds to the CLI. `add_arguments` fills the
    command's parser (it runs for every CLI start: import nothing heavy there); `run` gets
    a connected Temporal client and the parsed arguments and returns the exit status;
    raise `CommandError` for a one-line error."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[Any, argparse.Namespace], Awaitable[int]]
    description: str = field(default="")


class CommandError(Exception):
    """A command's usage or request error: printed as one line, exit status `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status
