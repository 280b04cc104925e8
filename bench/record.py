"""A benchmark's printed output as a committed record: runs any command, shows its output as
it comes, and writes `<out>/<id>.md` (the commit and its uncommitted files, the command, the
machine, start and end, the exit code, then the output whole) and `<id>.json` (the same
without the output). A figure quoted in docs/ links the record it comes from; a run that
failed or was interrupted is recorded too, with its exit code, never left out.

    python -m switchback.bench.record --id live-cost-1 -- \\
        python -m switchback.bench.live_cost --steps 50

An id is written once: a second run under the same id is refused (the first is the figure's
evidence), so a re-run takes a new id.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from switchback.bench.harness import machine_line
from switchback.operate.records import ROOT, checkout, write_whole

ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,80}")


def run(command: list[str], echo: bool = True) -> tuple[int, str]:
    """The command's exit code and its output (stdout and stderr as they interleave: a
    Python command's unbuffered); Ctrl-C stops the command and is recorded as exit code 130."""
    lines: list[str] = []
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            lines.append(line)
            if echo:
                sys.stdout.write(line)
                sys.stdout.flush()
        return proc.wait(), "".join(lines)
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        return 130, "".join(lines) + "\n[interrupted]\n"


def record(out: Path, run_id: str, command: list[str], echo: bool = True) -> dict[str, Any]:
    """Run `command` and write its record; the record's fields (without the output)."""
    if not ID.fullmatch(run_id):
        raise ValueError(f"--id {run_id!r}: lower-case letters, digits, '.', '_' and '-'")
    if (out / f"{run_id}.md").exists() or (out / f"{run_id}.json").exists():
        raise ValueError(f"{out / run_id}.md exists: a record is written once, take a new id")
    started = datetime.now(UTC)
    meta = {"id": run_id, "command": shlex.join(command), **checkout(),
            "machine": machine_line(), "started": f"{started:%Y-%m-%dT%H:%M:%SZ}"}
    code, output = run(command, echo)
    meta.update(ended=f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}", exit_code=code)
    out.mkdir(parents=True, exist_ok=True)
    dirty = ", ".join(meta["dirty"]) or "none"
    head = "\n".join([
        f"# Benchmark record {run_id}", "",
        f"- command: `{meta['command']}`",
        f"- commit: {meta['commit'] or '(no git checkout)'}; uncommitted files: {dirty}",
        f"- machine: {meta['machine']}",
        f"- started {meta['started']}, ended {meta['ended']}, exit code {code}"
        + ("" if code == 0 else " (failed or stopped: its figures do not count)"),
        "", "```", output.rstrip("\n").replace("```", "'''"), "```", ""])
    write_whole(out / f"{run_id}.md", head)
    write_whole(out / f"{run_id}.json", json.dumps(meta, indent=1) + "\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" not in args:
        print("usage: python -m switchback.bench.record --id ID [--out DIR] -- COMMAND ...",
              file=sys.stderr)
        return 2
    split = args.index("--")
    p = argparse.ArgumentParser(prog="python -m switchback.bench.record")
    p.add_argument("--id", required=True, help="the record's name: <out>/<id>.md and .json")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "evals",
                   help="where the record goes (default docs/evals, to commit it)")
    opts = p.parse_args(args[:split])
    command = args[split + 1:]
    if not command:
        print("record: no command after --", file=sys.stderr)
        return 2
    try:
        meta = record(opts.out, opts.id, command)
    except (ValueError, OSError) as e:
        print(f"record: {e}", file=sys.stderr)
        return 2
    print(f"record: {opts.out / opts.id}.md (exit code {meta['exit_code']})", file=sys.stderr)
    return int(meta["exit_code"])


if __name__ == "__main__":
    sys.exit(main())
