"""The tables and chart of `starter.py eval` (operate/evaluate.py).

Every table counts each run, stopped and timed-out ones among them (a failure, in the
denominator), and says of each strategy: success (completed and checked), completed, checked
(the job's checker passed on its files, whatever its status), who ended the completed runs
(`ended by` model: its job_complete; workflow: the workflow completed it when its
deliverables were there), false completions (completed, the check failed), missed completions
(the check passed, the job did not complete), the rest, and how the runs ended; then the
median and the spread (min-max over the runs) of model calls, prompt and completion tokens,
the share of prompt tokens served from the endpoint's prompt cache, cost and wall time. With
several configs, a table with a row per config. A markdown file with the tables and every
run, and a PNG with one panel per measure (bars: median, whiskers: min-max, dots: the runs).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

OUTCOMES = ("success", "false completion", "missed completion", "other")  # evaluate.outcome

MEASURES: list[tuple[str, str, Callable[[Any], float]]] = [
    ("model calls", "{:,.0f}", lambda r: r.model_calls + r.summaries),
    ("prompt tokens", "{:,.0f}", lambda r: r.prompt_tokens),
    ("completion tokens", "{:,.0f}", lambda r: r.completion_tokens),
    ("cache hit", "{:.0%}", lambda r: r.cached_tokens / r.prompt_tokens if r.prompt_tokens
     else 0.0),
    ("cost USD", "{:.4f}", lambda r: r.cost_usd),
    ("wall s", "{:,.0f}", lambda r: r.wall_seconds),
]
RUN_DEFAULTS: dict[str, Any] = {
    "strategy": "", "n": 0, "job_id": "", "config": "", "commit": "", "status": "",
    "ended_by": "", "checked": False, "success": False, "outcome": "", "check": "",
    "model_calls": 0, "summaries": 0, "prompt_tokens": 0, "completion_tokens": 0,
    "cached_tokens": 0, "tool_calls": 0, "phases": 0, "turns": 0, "cost_usd": 0.0,
    "wall_seconds": 0.0}


def as_run(data: dict[str, Any]) -> Any:
    """A run of a record (or of an older eval's .json, before `checked` was kept: a run
    was checked when it succeeded or missed its completion) as the tables read it."""
    r = SimpleNamespace(**{**RUN_DEFAULTS, **data})
    if "checked" not in data:
        r.checked = data.get("outcome") in (OUTCOMES[0], OUTCOMES[2])
    return r


def counts(runs: Sequence[Any]) -> dict[str, Any]:
    """What every table says of a group of runs."""
    done = [r for r in runs if r.status == "completed"]
    return {"runs": len(runs), "success": sum(bool(r.success) for r in runs),
            "completed": len(done), "checked": sum(bool(r.checked) for r in runs),
            "ended_by_model": sum(r.ended_by == "model" for r in done),
            "ended_by_workflow": sum(r.ended_by == "workflow" for r in done),
            **{o: sum(r.outcome == o for r in runs) for o in OUTCOMES[1:]},
            "ends": dict(Counter(r.status or "?" for r in runs).most_common())}


def spread(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1 or min(values) == max(values):
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def ends(c: dict[str, Any]) -> str:
    return ", ".join(f"{k} {n}" for k, n in c["ends"].items())


def table(runs: Sequence[Any], strategies: Sequence[str]) -> str:
    head = ["strategy", "runs", "success", "completed", "checked",
            "ended by model / workflow", "false completions", "missed completions", "other",
            "ends"] + [m[0] for m in MEASURES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in strategies:
        mine = [r for r in runs if r.strategy == s]
        c = counts(mine)
        ok = c["success"]
        cells = [s, str(len(mine)), f"{ok}/{len(mine)} ({ok / len(mine):.0%})" if mine else "-",
                 str(c["completed"]), str(c["checked"]),
                 f"{c['ended_by_model']} / {c['ended_by_workflow']}"]
        cells += [str(c[o]) for o in OUTCOMES[1:]] + [ends(c)]
        cells += [spread([f(r) for r in mine], fmt) for _, fmt, f in MEASURES]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_lines(runs: Sequence[Any]) -> str:
    head = ["job", "status", "ended by", "checked", "outcome", "check", "model calls",
            "prompt tok", "cached", "completion tok", "phases", "turns", "tool calls", "wall s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        lines.append("| " + " | ".join([
            r.job_id, r.status, r.ended_by or "-", "yes" if r.checked else "no", r.outcome,
            r.check[:80].replace("|", "/"),
            str(r.model_calls + r.summaries), f"{r.prompt_tokens:,}", f"{r.cached_tokens:,}",
            f"{r.completion_tokens:,}", str(r.phases), str(r.turns or 1), str(r.tool_calls),
            f"{r.wall_seconds:,.0f}"]) + " |")
    return "\n".join(lines)


def write_report(runs: Sequence[Any], strategies: Sequence[str], stem: Path,
                 title: str, chart_to: Path | None = None, note: str = "") -> str:
    """Write `<stem>.md` (and the chart, to `chart_to`: none when None); the tables."""
    summary = table(runs, strategies)
    configs = list(dict.fromkeys(r.config for r in runs if r.config))
    if len(configs) > 1:
        summary = combined({c: [r for r in runs if r.config == c] for c in configs},
                           strategies) + "\n\nEvery config:\n\n" + summary
    from switchback.operate.records import write_whole

    write_whole(stem.with_suffix(".md"),
                f"# {title}\n\n{note}Median (min-max) over the runs.\n\n{summary}\n\n"
                f"## Runs\n\n{run_lines(runs)}\n")
    if chart_to is not None:
        chart(runs, strategies, chart_to, title)
    return summary


def chart(runs: Sequence[Any], strategies: Sequence[str], path: Path, title: str) -> None:
    try:
        import matplotlib
    except ImportError:  # the table and runs are written; the chart needs the extra
        print("no chart: it needs matplotlib (pip install 'switchback[charts]')")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: list[tuple[str, Callable[[Any], float]]] = [
        ("success rate", lambda r: float(r.success)),
        ("false completions", lambda r: float(r.outcome == "false completion")),
        ("missed completions", lambda r: float(r.outcome == "missed completion")),
    ] + [(m[0], m[2]) for m in MEASURES]
    fig, axes = plt.subplots(1, len(panels), figsize=(2.6 * len(panels), 3.4))
    xs = range(len(strategies))
    for ax, (name, f) in zip(axes, panels, strict=True):
        per = [[f(r) for r in runs if r.strategy == s] for s in strategies]
        if name in ("success rate", "false completions", "missed completions"):
            ax.bar(xs, [sum(v) / len(v) if v else 0 for v in per], color="#4c72b0")
            ax.set_ylim(0, 1.05)
        else:
            meds = [statistics.median(v) if v else 0 for v in per]
            low = [m - min(v) if v else 0 for m, v in zip(meds, per, strict=True)]
            high = [max(v) - m if v else 0 for m, v in zip(meds, per, strict=True)]
            ax.bar(xs, meds, yerr=[low, high], capsize=4, color="#4c72b0", alpha=0.8)
            for i, v in enumerate(per):
                ax.scatter([i] * len(v), v, color="black", s=10, zorder=3)
        ax.set_title(name, fontsize=9)
        ax.set_xticks(list(xs), [s.replace("_", "\n") for s in strategies], fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cell(runs: Sequence[Any]) -> str:
    """One group of runs in a few words: right of all, completed (by whom), checked, the
    other ends."""
    if not runs:
        return "-"
    c = counts(runs)
    rest = ", ".join(f"{k} {n}" for k, n in c["ends"].items() if k != "completed")
    return (f"{c['success']}/{c['runs']}: {c['completed']} completed (model "
            f"{c['ended_by_model']} / workflow {c['ended_by_workflow']}), {c['checked']} "
            f"checked" + (f"; {rest}" if rest else ""))


def combined(groups: dict[str, list[Any]], strategies: Sequence[str]) -> str:
    """Several jobs in one table: a row per job (its runs from any number of evals, e.g.
    one per round), a cell per strategy (`cell`), and a total row."""
    head = ["job"] + [f"{s}: success/runs" for s in strategies]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for job, runs in groups.items():
        lines.append("| " + " | ".join(
            [job] + [cell([r for r in runs if r.strategy == s]) for s in strategies]) + " |")
    every = [r for runs in groups.values() for r in runs]
    lines.append("| **all** | " + " | ".join(
        f"**{cell([r for r in every if r.strategy == s])}**" for s in strategies) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import json

    p = argparse.ArgumentParser(
        prog="python -m switchback.operate.eval_report",
        description="One table of several `starter.py eval` runs: JOB=REPORT.json[,...] "
                    "per job (the .json of each eval's record, or an older eval's list).")
    p.add_argument("jobs", nargs="+", metavar="JOB=REPORT.json[,REPORT.json...]")
    a = p.parse_args(argv)
    groups: dict[str, list[Any]] = {}
    for arg in a.jobs:
        job, sep, files = arg.partition("=")
        if not sep or not files:
            p.error(f"{arg!r}: expected JOB=REPORT.json[,REPORT.json...]")
        for f in files.split(","):
            try:
                data = json.loads(Path(f).read_text())
            except (OSError, ValueError) as e:
                p.error(f"{f}: {e}")
            runs = data.get("runs") if isinstance(data, dict) else data
            if not isinstance(runs, list):
                p.error(f"{f}: not the runs of an eval (a record, or a JSON list)")
            groups.setdefault(job, []).extend(as_run(r) for r in runs if isinstance(r, dict))
    strategies = list(dict.fromkeys(str(r.strategy) for runs in groups.values()
                                    for r in runs if r.strategy))
    print(combined(groups, strategies))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
