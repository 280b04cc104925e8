"""The lines a deliverable must hold (config `small.expect_lines`): what a file lacks,
and the file mended, to show the model the one write that fixes it.

Told "notes/apples.md lacks the line '# Apples'. Write the file again with exactly those
lines.", the 1.5B model wrote the same heading-less sentence again, 5 to 10 times, in 6
of 10 phase_alternation runs of an eval (docs/local-models.md). It copies what it is
shown; so the refusal shows the file as it must be: its own lines kept, the missing ones
put in their place.
"""

from __future__ import annotations

import fnmatch
import re

from workflows.contract.config import LinePattern, line_text

MAX_MENDED_CHARS = 4000  # a longer file is not shown back whole (history stays small)


def lacks(text: str | None, path: str, want: list[str | LinePattern]) -> list[str]:
    """What the file (`text`, None: missing) lacks of `want`, a sentence each."""
    if text is None:
        return [f"{path} does not exist"]
    have = {line.strip() for line in text.splitlines()}
    return [f"{path} lacks {_named(line)}" for line in want if not holds(have, line)]


def holds(have: set[str], line: str | LinePattern) -> bool:
    """Whether the file's lines `have` (stripped) hold `line`: equal to it, or one matching
    its glob."""
    if isinstance(line, str):
        return line.strip() in have
    return any(fnmatch.fnmatchcase(h, line.glob) for h in have)


def mended(text: str, want: list[str | LinePattern]) -> str | None:
    """`text` with the lines of `want` it lacks put in: `want`'s lines in their order (a
    pattern's taken from the file's own lines), then the file's other lines, a line that is
    a near-copy of an expected one ("Apples" for "# Apples") dropped. None when a pattern has
    no line of the file to take, or the result is too long to show."""
    own = [line.strip() for line in text.splitlines() if line.strip()]
    exact = {_key(w) for w in want if isinstance(w, str)}
    used: set[int] = set()
    out: list[str] = []
    for w in want:
        if isinstance(w, str):
            out.append(w.strip())
            i = next((i for i, line in enumerate(own) if i not in used and _key(line) == _key(w)),
                     None)
        else:
            i = next((i for i, line in enumerate(own) if i not in used and _key(line) not in exact
                      and fnmatch.fnmatchcase(line, w.glob)), None)
            if i is None:
                return None
            out.append(own[i])
        if i is not None:
            used.add(i)
    out += [line for i, line in enumerate(own) if i not in used and _key(line) not in exact]
    body = "\n".join(out) + "\n"
    return body if len(body) <= MAX_MENDED_CHARS else None


def _key(line: str) -> str:
    """A line with case, marks and spaces ignored: how near-copies are found."""
    return re.sub(r"[\W_]+", "", line.lower())


def _named(line: str | LinePattern) -> str:
    return f"the line {line.strip()!r}" if isinstance(line, str) else line_text(line)
