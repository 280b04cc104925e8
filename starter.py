"""switchback CLI: start, follow, steer and inspect jobs.

    python starter.py start [--config creator] [--instructions FILE] [--document PATH ...]
                            [--id JOB_ID] [--follow | --wait [--show-workspace]]
    python starter.py follow JOB_ID          the live stream: model text, tool calls, phases, end
    python starter.py status JOB_ID          the live state (the `state` query; with no worker,
                                             the progress the job persisted)
    python starter.py list [--query Q]       jobs with status, phase, todos, tokens, cost
    python starter.py rewind JOB_ID "ISSUE" [--restore-phase N]
                                             signal: archive the todos, re-plan around ISSUE
                                             (and put the files back to phase N's start)
    python starter.py pause JOB_ID | resume JOB_ID
    python starter.py instruct JOB_ID "INSTRUCTION" | --file FILE
                                             the job's next instruction (a follow-up turn)
    python starter.py approve JOB_ID CALL_ID [--deny] [--note TEXT]
    python starter.py cancel JOB_ID
    python starter.py pipeline [--id ID] ...  an installed app's command (examples/documents:
                                             creator + a validator per requirement)
    python starter.py replay JOB_ID | --history FILE   replay against the current code
    python starter.py rerun JOB_ID [--from-phase N] [--id NEW] [--stop-at-divergence]
    python starter.py result JOB_ID          wait for the job and print its outcome
    python starter.py workspace JOB_ID       list the job's workspace files (S3)
    python starter.py cat JOB_ID PATH        print one workspace file
    python starter.py report JOB_ID [--out DIR]   chart (PNG) + summary (markdown) of a job
    python starter.py tools [PATTERN ...] [--json] [--mcp-file FILE]
                                             the tools a worker here offers: name, source, arguments
    python starter.py eval --config C[,C2|GLOB] [--runs N] [--strategies S1,S2] [--concurrency K]
                           [--id PREFIX] [--out DIR] [--record DIR] [--job-timeout S]
                                             the jobs N times per strategy, checked: a record
                                             (docs/evals.md), tables and a chart

Connects with Temporal's standard client configuration (TEMPORAL_ADDRESS, ...)
and S3's (AWS_ENDPOINT_URL_S3, ...), like the worker. Exit status: 0 when the job
completed, 1 when it ended otherwise (failed, cancelled, stuck, budget exhausted) or
a request failed, 2 on a usage error. Errors are one line (SWITCHBACK_DEBUG=1 adds
the traceback).

Thin on purpose: it parses the command line and imports only the client side
(operate/), and only for the command it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

TASK_QUEUE = os.environ.get("SWITCHBACK_TASK_QUEUE", "switchback")
# `switchback` (the installed command) or `starter.py`: how messages name the command; the
# same test as operate.command_name, repeated because the CLI loads only the standard library
# before a command runs (tests/test_layering.py)
PROG = "switchback" if os.path.basename(sys.argv[0] or "") == "switchback" else "starter.py"
# what the CLI reads from the environment (docs/cli.md has the same)
ENV_HELP = """environment:
  SWITCHBACK_TASK_QUEUE the task queue jobs start on (default switchback)
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_PROFILE, TEMPORAL_TLS_*
                        the Temporal server (Temporal's standard client configuration:
                        these, then the profile; neither names an address: 127.0.0.1:7233,
                        and a note on stderr says so)
  AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION, AWS_PROFILE, AWS_ACCESS_KEY_ID, ...
                        S3 (workspace, cat, rerun, report, eval; payloads above the threshold)
  SWITCHBACK_PAYLOAD_BUCKET, SWITCHBACK_PAYLOAD_THRESHOLD
                        where large payloads are (as the worker has them)
  SWITCHBACK_CODEC_KEYS payload encryption keys (as the worker has them)
  SWITCHBACK_UI_URL     the web UI the printed links point at (default http://127.0.0.1:8233;
                        Temporal Cloud: https://cloud.temporal.io)
  SWITCHBACK_BUCKET     the bucket of a job that did not record its own (default switchback)"""


JOB_HELP = "the job's id (its workflow id)"
QUEUE_HELP = "the task queue (default: SWITCHBACK_TASK_QUEUE, else switchback)"


class Version(argparse.Action):
    """--version: the installed distribution's version, looked up only when asked."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"switchback {version()}", flush=True)
        parser.exit()


def version() -> str:
    """The version of the distribution that installed the `switchback` command."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="console_scripts", name="switchback"):
        if ep.dist is not None:
            return ep.dist.version
    return "(not installed: run from a checkout without `pip install`)"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0],
                                epilog=ENV_HELP,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=Version, help="print the installed version and exit")
    sub = p.add_subparsers(dest="cmd", required=True)
    from switchback.environment import WORKER

    sub.add_parser("worker", help="run a worker (worker.py; its settings: the environment, "
                   "`switchback worker --help`)", description="Run a worker: connect to "
                   "Temporal, register AgentJob and its activities, poll until SIGTERM.",
                   epilog=WORKER, formatter_class=argparse.RawDescriptionHelpFormatter)
    s = sub.add_parser("start", help="start a job")
    s.add_argument("--config", default="creator", help="config name or inline JSON object "
                   "(default creator)")
    s.add_argument("--instructions", help="markdown file with the job's instructions")
    s.add_argument("--document", action="append", default=[], help="a file for the job's "
                   "documents/ (repeat for more); its content is sent, not its path")
    s.add_argument("--id", help="job id (default: job-<random>)")
    s.add_argument("--task-queue", default=TASK_QUEUE, help=QUEUE_HELP)
    s.add_argument("--wait", action="store_true", help="wait for the outcome")
    s.add_argument("--follow", action="store_true", help="follow the job live until it ends")
    s.add_argument("--show-workspace", action="store_true",
                   help="with --wait: list the workspace at the end")
    for name, text in (("result", "wait for a job and print its outcome"),
                       ("follow", "follow a job live until it ends"),
                       ("status", "print the live state of a job"), ("pause", "pause a job"),
                       ("resume", "resume a paused job"), ("cancel", "cancel a job")):
        sub.add_parser(name, help=text).add_argument("job_id", help=JOB_HELP)
    sub.choices["follow"].add_argument("--from-start", action="store_true", help="replay the "
                                       "events the job retains first (default: from now on)")
    rw = sub.add_parser("rewind", help="make a job re-plan around an issue")
    rw.add_argument("job_id", help=JOB_HELP)
    rw.add_argument("issue", help="what went wrong: the job archives its todos and plans "
                    "again around it")
    rw.add_argument("--restore-phase", type=int, metavar="N",
                    help="first put the workspace back as it was at the start of phase N (the "
                    "files it replaces are archived under archive/rewound/)")
    ins = sub.add_parser("instruct", help="give a job its next instruction (a follow-up "
                         "turn, taken when the current turn completes)")
    ins.add_argument("job_id", help=JOB_HELP)
    ins.add_argument("instruction", nargs="?", help="the instruction (markdown), or --file")
    ins.add_argument("--file", help="the instruction from a file")
    ap = sub.add_parser("approve", help="approve (or --deny) a tool call waiting for approval")
    ap.add_argument("job_id", help=JOB_HELP)
    ap.add_argument("call_id", help="the waiting tool call's id (`status` shows it)")
    ap.add_argument("--deny", action="store_true", help="deny the call instead")
    ap.add_argument("--note", default="", help="a note the model reads with the answer")
    rp = sub.add_parser("replay", help="replay a job's histories against the current code")
    rp.add_argument("job_id", nargs="?", help="the job whose runs to replay (or --history)")
    rp.add_argument("--history", help="a file from `temporal workflow show --output json`")
    rr = sub.add_parser("rerun", help="re-run a job from a phase, replaying its model answers")
    rr.add_argument("job_id", help="the job to re-run")
    rr.add_argument("--from-phase", type=int, default=1, metavar="N",
                    help="start from phase N's workspace, replaying the answers before it "
                    "(default 1)")
    rr.add_argument("--id", help="new job id")
    rr.add_argument("--task-queue", default=TASK_QUEUE, help=QUEUE_HELP)
    rr.add_argument("--stop-at-divergence", action="store_true",
                    help="stop instead of calling the live endpoint once prompts differ")
    rr.add_argument("--follow", action="store_true", help="follow the new job live")
    rpt = sub.add_parser("report", help="write a job's chart (PNG) and summary (markdown)")
    rpt.add_argument("job_id", help=JOB_HELP)
    rpt.add_argument("--out", default="reports", help="directory for <job>.png and <job>.md")
    ls = sub.add_parser("list", help="list jobs")
    ls.add_argument("--query", default='WorkflowType="AgentJob"',
                    help="a visibility query (default: every AgentJob)")
    con = sub.add_parser("console", help="serve a web page to watch and steer jobs",
                         description="Serve the console: the job list, each job's live stream "
                         "and its controls (docs/ui.md). Loopback by default; another address "
                         "needs SWITCHBACK_CONSOLE_TOKEN.")
    con.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                     "127.0.0.1; anything else needs SWITCHBACK_CONSOLE_TOKEN)")
    con.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    w = sub.add_parser("workspace", help="list a job's workspace")
    w.add_argument("job_id", help=JOB_HELP)
    c = sub.add_parser("cat", help="print a workspace file")
    c.add_argument("job_id", help=JOB_HELP)
    c.add_argument("path", help="the file's path in the workspace, e.g. main_plan.md")
    t = sub.add_parser("tools", help="list the tools a worker here offers (built-in, packages, "
                       "MCP servers)")
    t.add_argument("patterns", nargs="*", help="only names matching these globs, e.g. 'git.*'")
    t.add_argument("--json", action="store_true", help="the full schemas, as JSON")
    t.add_argument("--mcp-file", help="MCP servers file (default: SWITCHBACK_MCP_FILE, else "
                   "configs/mcp.yaml)")
    ev = sub.add_parser("eval", help="run a job N times under each strategy and compare them")
    ev.add_argument("--config", required=True, help="config names with a checker "
                    "(configs/<name>/check.py or expected.yaml), comma-separated, globs "
                    "allowed: 'heldout-*'")
    ev.add_argument("--runs", type=int, default=3, help="runs per strategy (default 3)")
    ev.add_argument("--strategies", help="comma-separated (default: every registered one)")
    ev.add_argument("--concurrency", type=int, default=1, help="jobs at a time (default 1)")
    ev.add_argument("--id", help="prefix of the job ids and name of the record; an eval "
                    "started again with the same id runs only what its record lacks (default "
                    "eval-<config>-<time>)")
    ev.add_argument("--check", help="checker command or script (default: the config's own)")
    ev.add_argument("--undeclared", action="store_true", help="run without the config's "
                    "`deliverables` (as a user who declares none: the model names them)")
    ev.add_argument("--price-in", type=float, help="USD per million prompt tokens for the "
                    "cost estimate (default: the config's llm.price_in_per_mtok)")
    ev.add_argument("--price-out", type=float, help="USD per million completion tokens")
    ev.add_argument("--out", default="reports", help="directory for the runs' workspaces "
                    "and the chart (and the record, without --record)")
    ev.add_argument("--record", help="directory of the record: <id>.runs.jsonl (a line per "
                    "run as it ends), <id>.json, <id>.md; docs/evals to commit it")
    ev.add_argument("--job-timeout", type=float, help="seconds after its start a job still "
                    "running is cancelled, a run that timed out (default: none)")
    ev.add_argument("--profile", help="llm.profile for every run: small, none (default: the "
                    "config's or its endpoint's)")
    ev.add_argument("--worker-commit", help="the commit the worker runs, for the record "
                    "(default: assumed the runner's checkout)")
    ev.add_argument("--task-queue", default=TASK_QUEUE, help=QUEUE_HELP)
    for name, command in app_commands().items():
        if name not in sub.choices:  # an app never shadows a command of switchback's own
            ap = sub.add_parser(name, help=command.help, description=command.description or None)
            try:
                command.add_arguments(ap)
            except Exception as e:  # a broken package must not break the CLI
                print(f"{PROG}: app command {name!r}: {type(e).__name__}: {e}", file=sys.stderr)
            ap.set_defaults(app_command=command)
    return p


def app_commands() -> dict[str, Any]:
    """The commands installed apps add (entry point group `switchback.commands`), by name;
    one that does not load is left out with a line on stderr."""
    from importlib.metadata import entry_points

    from switchback.apps import COMMANDS_GROUP, Command

    found: dict[str, Any] = {}
    for ep in entry_points(group=COMMANDS_GROUP):
        try:
            command = ep.load()
        except Exception as e:  # a broken package must not break the CLI
            print(f"{PROG}: app command {ep.name!r} ({ep.value}) did not load: {e}",
                  file=sys.stderr)
            continue
        if isinstance(command, Command):
            found[ep.name] = command
    return found


async def run(a: argparse.Namespace) -> int:
    """Connect and carry out one command (imports happen here, for this command only)."""
    if a.cmd == "tools":  # no Temporal, no S3: what this machine's worker would offer
        from switchback.operate.tools_command import tools

        return await tools(a)
    if a.cmd in ("workspace", "cat"):  # Temporal says where the job's files are, if it can
        from switchback.activities.storage.s3 import S3Store
        from switchback.operate import inspect
        from switchback.operate.client import try_connect

        say_where(a)
        found = await try_connect(S3Store())
        return await (inspect.workspace(found, a.job_id) if a.cmd == "workspace"
                      else inspect.cat(found, a.job_id, a.path))
    if a.cmd == "console":  # it connects itself, after checking where it may listen
        from switchback.operate.console.serve import serve

        say_where(a)
        return await serve(a.host, a.port)
    from switchback.activities.storage.s3 import S3Store
    from switchback.operate import commands, following, inspect
    from switchback.operate.client import connect

    job = commands.job_input(a) if a.cmd == "start" else None  # checked before connecting
    say_where(a)
    client = await connect(S3Store())
    if job is not None:
        return await commands.start(client, a, job)
    if a.cmd == "eval":
        from switchback.operate.evaluate import evaluate

        return await evaluate(client, a)
    if getattr(a, "app_command", None) is not None:
        return int(await a.app_command.run(client, a))
    by_args: dict[str, Any] = {"approve": commands.approve, "instruct": commands.instruct,
                               "replay": inspect.replay,
                               "rerun": inspect.rerun, "report": inspect.report}
    if a.cmd in by_args:
        return int(await by_args[a.cmd](client, a))
    if a.cmd in ("pause", "resume"):
        return await commands.signal(client, a.job_id, a.cmd)
    if a.cmd == "rewind":
        return await commands.rewind(client, a.job_id, a.issue, a.restore_phase)
    if a.cmd == "list":
        return await commands.list_jobs(client, a.query)
    if a.cmd == "follow":
        return await following.follow(client, a.job_id, a.from_start)
    by_id = {"status": commands.status, "cancel": commands.cancel, "result": following.result}
    return await by_id[a.cmd](client, a.job_id)


def say_where(a: argparse.Namespace) -> None:
    """A line on stderr when no setting names the Temporal server: the default is assumed."""
    from switchback.operate.client import target

    where = target()
    if where.defaulted:
        print(f"{PROG} {a.cmd}: note: no TEMPORAL_ADDRESS and no profile address: using "
              f"{where.address}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run a command; every error is one line on stderr and an exit status."""
    a = parser().parse_args(argv)
    if a.cmd == "worker":  # the worker's own loop, messages and exit status (worker.py)
        from switchback import worker
        worker.run_loop(worker.main())
        return 0
    try:
        return asyncio.run(run(a))
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # the boundary: no traceback for the user
        if os.environ.get("SWITCHBACK_DEBUG"):
            raise
        message, code = explain(e, a)
        print(f"{PROG} {a.cmd}: {message}", file=sys.stderr)
        return code


def explain(e: Exception, a: argparse.Namespace) -> tuple[str, int]:
    """One line for an error, and the exit status (2: usage, 1: failure)."""
    from switchback.operate import CliError

    if isinstance(e, CliError):
        return str(e), e.code
    from switchback.apps import CommandError

    if isinstance(e, CommandError):
        return str(e), e.status
    from temporalio.exceptions import WorkflowAlreadyStartedError
    from temporalio.service import RPCError, RPCStatusCode

    job = getattr(a, "job_id", None) or getattr(a, "id", None)
    if isinstance(e, WorkflowAlreadyStartedError):
        return f"a job with id '{job}' already exists; choose another --id", 1
    from switchback.operate.client import TemporalUnreachable, target

    if isinstance(e, TemporalUnreachable):
        return (f"{e}; start the stack (python -m switchback.devstack up), or set TEMPORAL_ADDRESS "
                "(or a profile: TEMPORAL_PROFILE)"), 1
    if isinstance(e, RPCError):
        if e.status == RPCStatusCode.NOT_FOUND and "namespace" in e.message.lower():
            where = target()
            return (f"namespace '{where.namespace}' ({where.namespace_from}) not found on "
                    f"{where.address} ({where.address_from}): {e.message}"), 1
        if e.status == RPCStatusCode.NOT_FOUND:
            return f"no job '{job}' ({e.message})", 1
        if e.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED):
            return f"cannot reach Temporal at {target()}: {e.message}", 1
        return f"Temporal refused the request: {e.message}", 1
    text = " ".join(str(e).split())[:400]
    if type(e).__name__ in ("StorageUnavailable", "EndpointConnectionError"):
        where_s3 = os.environ.get("AWS_ENDPOINT_URL_S3", "AWS")
        return f"cannot reach S3 ({where_s3}): {text}", 1
    return f"{type(e).__name__}: {text}", 1


def cli() -> None:
    """The `switchback` command (and `python starter.py`): main(), then exit without the
    interpreter's finalisation."""
    code = main()
    try:
        from switchback import telemetry
        telemetry.shutdown()  # flush spans: os._exit below skips atexit
    except Exception:  # noqa: BLE001 - exiting anyway
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter finalisation: the Temporal client's core runtime threads can race
    # it ("PyGILState_Release ... finalizing") and turn a clean exit into an abort.
    os._exit(code)


if __name__ == "__main__":
    cli()
