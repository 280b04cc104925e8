"""The record of a `starter.py eval`: what a figure quoted from it can be checked against.

In `--record DIR` (docs/evals, to commit it; default `--out`), for `--id ID`:

- `ID.runs.jsonl`: one line per run as it ends (operate/records.py), so a stopped eval
  loses no finished run and, started again with the same id, runs only what it lacks;
- `ID.json`: the options (the configs, `--undeclared`, `--profile`, `--check`,
  `--job-timeout`), the command, the commit of the checkout that ran it and its
  uncommitted changes, the worker's commit (`--worker-commit`, else assumed the runner's),
  the runs planned and recorded, a row per strategy and per config and strategy
  (eval_report.counts), and every run;
- `ID.md`: the tables and every run.

An eval continues a record only with the same options and while nothing it runs changed
since the record's commit (records.changed_since: docs, tests and README aside): a table of
the record is then the runs of one engine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from switchback.operate import CliError, eval_report, records


def options(a: argparse.Namespace, configs: list[str]) -> dict[str, Any]:
    """What the runs of a record must share (strategies and runs per strategy may grow)."""
    return {"configs": configs, "undeclared": bool(getattr(a, "undeclared", False)),
            "profile": getattr(a, "profile", None) or None, "check": a.check,
            "job_timeout": getattr(a, "job_timeout", None) or None}


@dataclass
class Book:
    """An eval's record, open: the runs it holds by job id, where its files are."""

    a: argparse.Namespace
    configs: list[str]
    lines: Path
    summary: Path
    table: Path
    head: dict[str, Any]  # what ID.json says besides the runs
    runs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, a: argparse.Namespace, configs: list[str]) -> Book:
        """The record of `a.id`, refused when made with other options or another engine."""
        from switchback.operate.evaluate import Run

        folder = Path(getattr(a, "record", None) or a.out)
        stem = folder / a.id
        book = cls(a, configs, stem.with_name(f"{a.id}.runs.jsonl"),
                   stem.with_name(f"{a.id}.json"), stem.with_name(f"{a.id}.md"), {})
        mine = options(a, configs)
        if book.summary.is_file():
            before = json.loads(book.summary.read_text(encoding="utf-8"))
            book.head = {k: v for k, v in before.items() if k != "runs"} if isinstance(
                before, dict) else {}
            was = book.head.get("options") or {}
            if differ := [f"{k} was {json.dumps(was.get(k))}" for k, v in mine.items()
                          if was.get(k) != json.loads(json.dumps(v))]:
                raise CliError(f"--id {a.id}: its record ({book.summary}) was made with other "
                               f"options ({', '.join(differ)}); give another --id", 2)
            since = (book.head.get("runner") or {}).get("commit", "")
            changed = records.changed_since(since)
            if changed:
                raise CliError(
                    f"--id {a.id}: the code changed since its record began at {since[:12]} "
                    f"({', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''}): its "
                    "runs would mix engines; give another --id", 2)
            if changed is None:
                print(f"eval: cannot tell whether the code changed since {since[:12] or '?'} "
                      "(no git): continuing the record", flush=True)
        else:
            here = records.checkout()
            worker = getattr(a, "worker_commit", None)
            book.head = {
                "id": a.id, "options": mine, "command": " ".join(sys.argv),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "runner": here,
                "worker": {"commit": worker or here["commit"],
                           "from": "--worker-commit" if worker else
                           "assumed: the runner's checkout (a worker started from it, as "
                           "devstack.real_stack does)"}}
        if book.head.get("runner", {}).get("dirty"):
            print(f"eval: uncommitted changes in the runner's checkout: "
                  f"{', '.join(book.head['runner']['dirty'][:5])}", flush=True)
        known = {f.name for f in fields(Run)}
        for data in records.read_lines(book.lines):
            try:
                run = Run(**{k: v for k, v in data.items() if k in known})
            except TypeError:  # not a run of an eval (its strategy, n or job id missing)
                continue
            book.runs[run.job_id] = run
        book.write_head()
        return book

    def write_head(self) -> None:
        records.write_whole(self.summary, json.dumps(
            {**self.head, "runs": [asdict(r) for r in self.runs.values()]}, indent=1))

    def add(self, run: Any, planned: list[Any]) -> None:
        """A run that ended: its line at once, the summary and table again."""
        records.append_line(self.lines, asdict(run))
        self.runs[run.job_id] = run
        self.write(planned)

    def write(self, planned: list[Any], chart: Path | None = None) -> str:
        """ID.json and ID.md from the runs recorded (the chart too, to `chart`); the
        tables."""
        runs = [self.runs[r.job_id] for r in planned if r.job_id in self.runs]
        runs += [r for r in self.runs.values() if r not in runs]  # an earlier, larger plan
        strategies = list(dict.fromkeys([*(r.strategy for r in planned),
                                         *(r.strategy for r in runs)]))
        runner = self.head.get("runner") or {}
        commits = sorted({r.commit for r in runs if r.commit})
        self.head.update({
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "planned": len(planned), "recorded": len(runs), "commits": commits,
            "by_strategy": {s: eval_report.counts([r for r in runs if r.strategy == s])
                            for s in strategies},
            "by_config": {c: {s: eval_report.counts([r for r in runs if r.config == c
                                                     and r.strategy == s])
                              for s in strategies}
                          for c in dict.fromkeys(r.config for r in runs)}})
        self.write_head()
        o = self.head.get("options") or {}
        profile = f", profile {o['profile']}" if o.get("profile") else ""
        title = (f"{self.a.id}: {', '.join(o.get('configs') or self.configs)}"
                 f"{' without its deliverables' if o.get('undeclared') else ''}{profile}, "
                 f"runner at {str(runner.get('commit', ''))[:12] or '?'}"
                 f"{' with uncommitted changes' if runner.get('dirty') else ''}")
        missing = len(planned) - len([r for r in planned if r.job_id in self.runs])
        note = (f"{len(runs)} runs recorded"
                + (f", {missing} of the {len(planned)} planned not yet" if missing else "")
                + f"; worker at {str((self.head.get('worker') or {}).get('commit', ''))[:12]}"
                + (f"; runs at {', '.join(c[:12] for c in commits)}" if len(commits) > 1
                   else "") + ". Stopped and timed-out runs count (a failure). ")
        return eval_report.write_report(runs, strategies, self.table, title, chart, note)
