"""The table and chart of `starter.py eval` (operate/evaluate.py).

Per strategy: success (completed and checked), false completions (completed, the check
failed), missed completions (the check passed, the job did not complete), the rest; then
the median and the spread (min-max over the runs) of model calls, prompt and completion
tokens, the share of prompt tokens served from the endpoint's prompt cache, cost and wall
time; a markdown file with the table and every run, and a PNG with one panel per measure
(bars: median, whiskers: min-max, dots: the runs).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
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


def spread(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1 or min(values) == max(values):
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def table(runs: Sequence[Any], strategies: Sequence[str]) -> str:
    head = ["strategy", "runs", "success", "false completions", "missed completions",
            "other"] + [m[0] for m in MEASURES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in strategies:
        mine = [r for r in runs if r.strategy == s]
        ok = sum(r.success for r in mine)
        cells = [s, str(len(mine)), f"{ok}/{len(mine)} ({ok / len(mine):.0%})" if mine else "-"]
        cells += [str(sum(r.outcome == o for r in mine)) for o in OUTCOMES[1:]]
        cells += [spread([f(r) for r in mine], fmt) for _, fmt, f in MEASURES]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_lines(runs: Sequence[Any]) -> str:
    head = ["job", "status", "ended by", "outcome", "check", "model calls", "prompt tok",
            "cached",
            "completion tok", "phases", "tool calls", "wall s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        lines.append("| " + " | ".join([
            r.job_id, r.status, r.ended_by or "-", r.outcome,
            r.check[:80].replace("|", "/"),
            str(r.model_calls + r.summaries), f"{r.prompt_tokens:,}", f"{r.cached_tokens:,}",
            f"{r.completion_tokens:,}", str(r.phases), str(r.tool_calls),
            f"{r.wall_seconds:,.0f}"]) + " |")
    return "\n".join(lines)


def write_report(runs: Sequence[Any], strategies: Sequence[str], stem: Path,
                 title: str) -> str:
    """Write `<stem>.md` and `<stem>.png`; the table."""
    summary = table(runs, strategies)
    stem.with_suffix(".md").write_text(
        f"# {title}\n\nMedian (min-max) over the runs.\n\n{summary}\n\n## Runs\n\n"
        f"{run_lines(runs)}\n")
    chart(runs, strategies, stem.with_suffix(".png"), title)
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


def combined(groups: dict[str, list[dict[str, Any]]], strategies: Sequence[str]) -> str:
    """Several evals in one table: a row per job (its runs from any number of evals, e.g.
    one per round), a cell per strategy counting each outcome, and a total row."""
    def cell(runs: list[dict[str, Any]]) -> str:
        if not runs:
            return "-"
        ok = sum(bool(r.get("success")) for r in runs)
        rest = [f"{n} {o}" for o in OUTCOMES[1:]
                if (n := sum(r.get("outcome") == o for r in runs))]
        done = sum(r.get("status") == "completed" for r in runs)
        return f"{ok}/{len(runs)}" + (f" ({', '.join(rest)})" if rest else "") \
            + f"; {done} completed"

    head = ["job"] + [f"{s}: success/runs" for s in strategies]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for job, runs in groups.items():
        lines.append("| " + " | ".join(
            [job] + [cell([r for r in runs if r.get("strategy") == s]) for s in strategies])
            + " |")
    every = [r for runs in groups.values() for r in runs]
    lines.append("| **all** | " + " | ".join(
        f"**{cell([r for r in every if r.get('strategy') == s])}**" for s in strategies) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import json

    p = argparse.ArgumentParser(
        prog="python -m operate.eval_report",
        description="One table of several `starter.py eval` runs: JOB=REPORT.json[,...] "
                    "per job (the .json beside each eval's table).")
    p.add_argument("jobs", nargs="+", metavar="JOB=REPORT.json[,REPORT.json...]")
    a = p.parse_args(argv)
    groups: dict[str, list[dict[str, Any]]] = {}
    for arg in a.jobs:
        job, sep, files = arg.partition("=")
        if not sep or not files:
            p.error(f"{arg!r}: expected JOB=REPORT.json[,REPORT.json...]")
        for f in files.split(","):
            try:
                runs = json.loads(Path(f).read_text())
            except (OSError, ValueError) as e:
                p.error(f"{f}: {e}")
            if not isinstance(runs, list):
                p.error(f"{f}: not the runs of an eval (a JSON list)")
            groups.setdefault(job, []).extend(r for r in runs if isinstance(r, dict))
    strategies = list(dict.fromkeys(str(r["strategy"]) for runs in groups.values()
                                    for r in runs if r.get("strategy")))
    print(combined(groups, strategies))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
