"""The fault benchmark, small: 6 jobs with model faults on 2 workers; each worker SIGKILLed once,
S3 SIGSTOPped for 5 s, the Temporal dev server SIGKILLed and restarted, S3 requests held and
reordered for 8 s - every job completes, its workspace identical to a fault-free run of the
same job, no archive entry twice, and every phase snapshot still restores (copy-on-write kept
each version it names that a write replaced), and no at-most-once tool call executed twice.

bench/chaos.py runs its own stack (a Temporal it can kill and restart from its database file),
not the session's servers. `python -m switchback.bench.chaos` is the full version (20 jobs,
20 s freeze).
"""

from __future__ import annotations

from switchback.bench.chaos import run


async def test_no_fault_loses_a_job_or_changes_its_workspace(tmp_path) -> None:
    figures = await run(jobs=6, workers=2, freeze=5, phases=1, latency_ms=300, seed=7,
                        timeout=400, jitter=8, state_dir=tmp_path)
    print("\n" + "\n".join(figures.lines() + figures.events))
    assert len(figures.events) == 5, figures.events  # every disruption happened mid-run
    assert sum(figures.faults.values()) > 0
    assert figures.lost == [] and figures.completed == 6
    assert figures.different == {} and figures.identical == 6
    assert figures.duplicates == 0
    assert figures.unrestorable == []  # every snapshot's versions live or kept
    assert figures.retried > 0  # the disruptions hit running work
    assert figures.effects_at_most_once == 6  # each job's at-most-once call: executed ...
    assert figures.duplicated_at_most_once == 0  # ... once, whatever was killed
