"""Checks this held-out job's workspace: `python check.py WORKSPACE_FOLDER` (exit 0: right).

Each glossary file opens with its term in capitals and holds one short definition of that
term alone: a file that also holds another term's entry, a definition copied into every
file, or one that does not define the term fails (a definition may name
another term: jitter is often told as latency that varies).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# the term -> words one of which its definition uses (stems)
TERMS = {
    "latency": ("delay", "time", "wait", "lag", "long", "respon", "takes"),
    "throughput": ("amount", "rate", "per ", "volume", "how much", "how many", "number",
                   "quantity", "capacity"),
    "jitter": ("vari", "fluctuat", "inconsisten", "irregular", "uneven", "unstable", "change",
               "differ", "deviat", "unpredictab", "random"),
}


def text(root: Path, path: str) -> str | None:
    f = root / path
    return f.read_text(errors="replace") if f.is_file() else None


def heading(line: str) -> str:
    """A line as a heading: markdown marks, bold and a trailing colon aside."""
    return line.strip().lstrip("#").strip().strip("*_`").rstrip(":").strip()


def problems(root: Path) -> list[str]:
    out: list[str] = []
    definitions: dict[str, str] = {}
    for term, stems in TERMS.items():
        path = f"glossary/{term}.txt"
        t = text(root, path)
        lines = [ln.strip() for ln in (t or "").splitlines() if ln.strip()]
        if t is None:
            out.append(f"{path} is missing")
            continue
        if not lines or heading(lines[0]) != term.upper():
            out.append(f"{path} does not open with {term.upper()} on its own line")
            continue
        body = " ".join(lines[1:])
        others = [o for o in TERMS if o != term and any(heading(ln).lower() == o
                                                        for ln in lines)]
        if others:
            out.append(f"{path} also holds {', '.join(others)}")
        elif len(lines) > 4 or len(re.findall(r"[A-Za-z]+", body)) < 4:
            out.append(f"{path} has no definition of one or two sentences under its term")
        elif not any(s in body.lower() for s in stems):
            out.append(f"{path} does not define {term}: {body[:60]!r}")
        else:
            definitions[term] = " ".join(body.lower().split())
    if len(definitions) == len(TERMS) and len(set(definitions.values())) < len(TERMS):
        out.append("the glossary files hold the same definition")
    return out


if __name__ == "__main__":
    found = problems(Path(sys.argv[1]))
    print("; ".join(found) or "ok")
    sys.exit(1 if found else 0)
