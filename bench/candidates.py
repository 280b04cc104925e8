"""Precision and recall of `find_candidates` on the labelled sentences.

    python -m switchback.bench.candidates [--errors]

Each sentence of tests/data/requirement_sentences.yaml is its own chunk; a sentence counts
as predicted "requirement" when at least one candidate is found in it. Prints the figures
overall, per language and per split (dev: what the detector was developed against;
holdout: written beforehand and never used to tune it); --errors lists the misses.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from switchback_documents.candidates import find_candidates

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "requirement_sentences.yaml"


@dataclass(frozen=True)
class Score:
    n: int
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def load(path: Path = DATA) -> list[dict]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["sentences"]


def predict(rows: list[dict]) -> list[bool]:
    chunks = [(f"s{i:04d}", r["text"]) for i, r in enumerate(rows)]
    hit = {c.chunk_id for c in find_candidates(chunks)}
    return [cid in hit for cid, _ in chunks]


def score(rows: list[dict], predicted: list[bool]) -> Score:
    pairs = list(zip((bool(r["requirement"]) for r in rows), predicted, strict=True))
    return Score(n=len(pairs), tp=sum(t and p for t, p in pairs),
                 fp=sum(p and not t for t, p in pairs), fn=sum(t and not p for t, p in pairs))


def report(rows: list[dict]) -> dict[str, Score]:
    """Scores for 'all', each language ('en', 'de') and each split ('dev', 'holdout')."""
    predicted = predict(rows)
    groups: dict[str, list[int]] = {"all": list(range(len(rows)))}
    for key in ("lang", "split"):
        for i, r in enumerate(rows):
            groups.setdefault(r.get(key, "dev"), []).append(i)
    return {name: score([rows[i] for i in idx], [predicted[i] for i in idx])
            for name, idx in groups.items()}


def main(argv: list[str]) -> None:
    rows = load()
    print(f"requirement candidates on {DATA.name}: {len(rows)} sentences")
    print(f"  {'group':<8} {'n':>4} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>10} "
          f"{'recall':>7}")
    for name, s in report(rows).items():
        print(f"  {name:<8} {s.n:>4} {s.tp:>4} {s.fp:>4} {s.fn:>4} {s.precision:>10.3f} "
              f"{s.recall:>7.3f}")
    if "--errors" in argv:
        for r, p in zip(rows, predict(rows), strict=True):
            if p != bool(r["requirement"]):
                kind = "FP" if p else "FN"
                print(f"  {kind} [{r['lang']}/{r.get('split', 'dev')}] {r['text']}")


if __name__ == "__main__":
    main(sys.argv[1:])
