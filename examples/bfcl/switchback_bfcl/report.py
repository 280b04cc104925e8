"""The BFCL runner's report: a row per category and contender, the markdown table and the
JSON of rows and runs (runner.Run). Besides BFCL's verdict a row holds what the like-for-like
protocol compares: the model calls each turn took under the per-turn budget (runs stopped
over it) and the calls a turn made before its first BFCL call (the median over the turns
that made one: a harness's ritual before the work)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from switchback.operate.records import write_whole

if TYPE_CHECKING:
    from switchback_bfcl.runner import Run


@dataclass
class Row:
    category: str
    strategy: str
    cases: int = 0
    valid: int = 0
    turns: int = 0
    reached: int = 0
    turns_right: int = 0
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    wall_seconds: float = 0.0
    skipped: str = ""
    errors: dict[str, int] = field(default_factory=dict)  # BFCL error types, counted
    over_budget: int = 0  # runs stopped in a turn that passed the call budget
    # per turn that made a BFCL call: the model calls made in it before the first one
    first_domain_call: list[int] = field(default_factory=list)
    no_domain_call: int = 0  # turns reached that made no BFCL call

    @property
    def first_domain_median(self) -> float | None:
        return (statistics.median(self.first_domain_call) if self.first_domain_call
                else None)

    @property
    def accuracy(self) -> float:
        return self.valid / self.cases if self.cases else 0.0


def summarize(runs: Sequence[Run]) -> list[Row]:
    """A row per category and strategy (and per strategy over all categories when there
    are several), categories and strategies in the order the runs came."""
    rows: dict[tuple[str, str], Row] = {}
    categories = list(dict.fromkeys(r.category for r in runs))
    for r in runs:
        keys = [(r.category, r.strategy)] + ([("all", r.strategy)] if len(categories) > 1
                                              else [])
        for key in keys:
            row = rows.setdefault(key, Row(*key))
            if r.skipped:
                row.skipped = row.skipped or r.skipped
                continue
            row.cases += 1
            row.valid += r.valid
            row.turns += r.turns
            row.reached += r.reached
            row.turns_right += r.turns_right
            row.model_calls += r.model_calls
            row.tokens_in += r.tokens_in
            row.tokens_out += r.tokens_out
            row.wall_seconds = round(row.wall_seconds + r.wall_seconds, 1)
            row.over_budget += r.status == "over_budget"
            row.first_domain_call += [n for n in r.first_domain_call if n is not None]
            row.no_domain_call += sum(n is None for n in r.first_domain_call)
            if not r.valid:
                kind = r.error_type or "invalid"
                row.errors[kind] = row.errors.get(kind, 0) + 1
    for row in rows.values():
        if row.cases:
            row.skipped = ""
    order = {c: i for i, c in enumerate([*categories, "all"])}
    strategies = {s: i for i, s in enumerate(dict.fromkeys(r.strategy for r in runs))}
    return sorted(rows.values(), key=lambda w: (order[w.category], strategies[w.strategy]))


def table(rows: Sequence[Row]) -> str:
    lines = ["| category | strategy | accuracy | valid / cases | turns reached | turns right | "
             "model calls | over budget | calls to first BFCL call, median | turns without "
             "one | tokens in | tokens out | wall s | invalid: why |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
             "---: | ---: | --- |"]
    for w in rows:
        if not w.cases:
            lines.append(f"| {w.category} | {w.strategy} | - | skipped | | | | | | | | | | "
                         f"{w.skipped} |")
            continue
        why = ", ".join(f"{k} {n}" for k, n in sorted(w.errors.items(), key=lambda kv: -kv[1]))
        lines.append(f"| {w.category} | {w.strategy} | {w.accuracy:.0%} | {w.valid} / "
                     f"{w.cases} | {w.reached} / {w.turns} | {w.turns_right} / {w.turns} | "
                     f"{w.model_calls} | {w.over_budget} | "
                     f"{'-' if w.first_domain_median is None else f'{w.first_domain_median:g}'} | "
                     f"{w.no_domain_call} | "
                     f"{w.tokens_in} | {w.tokens_out} | "
                     f"{w.wall_seconds:.0f} | {why} |")
    return "\n".join(lines)


def finished_cases(runs: Sequence[Run], contenders: Sequence[str]) -> list[Run]:
    """The runs of the cases every contender has a run of: a table of them compares the
    contenders on the same cases (a command stopped midway leaves a case half run)."""
    have: dict[str, set[str]] = {}
    for r in runs:
        have.setdefault(r.case_id, set()).add(r.strategy)
    return [r for r in runs if have[r.case_id] >= set(contenders)]


def write_report(runs: Sequence[Run], out: Path, prefix: str, title: str,
                 contenders: Sequence[str] | None = None, preface: str = ""
                 ) -> tuple[Path, Path]:
    """`<out>/<prefix>.md` (the table) and `<out>/<prefix>.json` (rows and runs). With
    `contenders`, the table holds only the cases each of them has run (`finished_cases`);
    the JSON keeps every run."""
    out.mkdir(parents=True, exist_ok=True)
    shown = finished_cases(runs, contenders) if contenders else list(runs)
    rows = summarize(shown)
    cases_shown = len(dict.fromkeys(r.case_id for r in shown))
    left = len(dict.fromkeys(r.case_id for r in runs)) - cases_shown
    note = (f" {left} case(s) not yet run by every contender are left out of the table."
            if left else "")
    md, js = out / f"{prefix}.md", out / f"{prefix}.json"
    write_whole(md, f"# {title}\n\n{cases_shown} case(s). Totals over the cases of each row: "
                "model calls, prompt and completion tokens, wall time (a job's start to close; "
                f"the baseline's loop).{note}\n\n" + (preface + "\n\n" if preface else "")
                + table(rows) + "\n")
    write_whole(js, json.dumps({"title": title,
                                "rows": [{**asdict(w), "accuracy": round(w.accuracy, 4),
                                          "first_domain_median": w.first_domain_median}
                                         for w in rows],
                                "runs": [asdict(r) for r in runs]}, indent=1))
    return md, js



__all__ = ["Row", "finished_cases", "summarize", "table", "write_report"]
