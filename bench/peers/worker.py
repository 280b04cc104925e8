"""Worker process of a Temporal peer: `python -m switchback.bench.peers.worker <key> <task queue>`.

Reads TEMPORAL_ADDRESS, OPENAI_BASE_URL, OPENAI_API_KEY, the AWS_* variables of the S3
workspace store, BENCH_MAX_ACTIVITIES and BENCH_HEARTBEAT_SECONDS from the environment;
prints "<key> worker started on <queue>" when it polls; stops on SIGTERM.
"""

from __future__ import annotations

import sys

from switchback.bench.peers import contenders


def main(argv: list[str]) -> None:
    key, task_queue = argv
    contenders()[key].serve(task_queue)


if __name__ == "__main__":
    main(sys.argv[1:])
