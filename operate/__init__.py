"""Operator tooling behind starter.py: the client connection (client.py), the job
commands (commands.py), workspace and history commands (inspect.py), replay, rerun and
the job report. Client side only: nothing here imports the worker.
"""
import os
import sys


def command_name() -> str:
    """How a hint printed to the user names the CLI: `switchback` when it runs as the
    installed command, `python starter.py` from a checkout."""
    return ("switchback" if os.path.basename(sys.argv[0] or "") == "switchback"
            else "python starter.py")


class CliError(Exception):
    """A user error or a failure, said in one line: exit code 2 (usage) or 1 (failure)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code
