"""The files a task's own words ask the job to write (the small model profile's deliverables
of a job that declares none; docs/profiles.md).

A user who runs a job without a `deliverables:` list still wrote them into the task:
"Add the numbers ... and write the total to `output/total.txt`". The 1.5B model ended such
jobs `completed` with the files unwritten (an undeclared eval-files run named one of its
three notes), so with the profile the workflow holds the job to the files its task names
this way. Only exact shapes count, sentence by sentence (a list item is a sentence):

    a write verb (write, create, save, produce, generate, store), then a path in backticks
    that is its object:
      - right after the verb, or after a lead-in that ends in a colon
            "Write `shopping.md`: a list ..."   "Write three notes: `a.md`, `b.md` and `c.md`."
      - after a destination word: to, into, as, named, called, file, files
            "write the total to `output/total.txt`"   "write whether `x.md` exists to `r.md`"
      - after such a path, the next one of its list (a comma or "and" between them)
            "Write three files: `a.txt` containing alpha, `b.txt` containing beta, and ..."
    a path without backticks counts after a destination word ("write it to out.txt"), or
    right after the verb when a clause or the sentence's end follows ("Create hello.py that
    prints hello"; not "Write Node.js code")

What counts as no deliverable: a path after other words ("Write a summary of `in.md` ...",
"Write whether `secret.md` exists ..."), a verb after a condition or a negation in its
sentence ("If it fails, write `error.md`", "Do not create `x.md`", "You may write ..."),
anything in a code block, a path under documents/, the workflow's files, the memory files,
a file a sentence of the task says to delete or remove ("Write `tmp.txt`, ... then delete
`tmp.txt`"). Pure text work: the workflow runs it on the job's instructions and each
follow-up instruction.
"""

from __future__ import annotations

import re

from workflows.contract import layout

MAX_FILES = 20
MAX_TASK = 50_000  # characters of a task read (the workflow runs this: it stays fast)
MAX_SENTENCE = 2_000  # characters of one sentence read (a longer one is no plain instruction)
MEMORY_FILES = frozenset({layout.MEMORY, layout.PLAN, layout.TODOS})


def named(task: str) -> list[str]:
    """The files `task` (markdown) asks to be written, in order, at most MAX_FILES (in its
    first MAX_TASK characters)."""
    found: list[str] = []
    removed: set[str] = set()  # a file the task also says to delete is no deliverable
    for sentence in _sentences(task[:MAX_TASK]):
        found += _objects(sentence)
        if gone := _REMOVE.search(sentence):
            removed.update(m.group(1) or m.group(2)
                           for m in _NAMED.finditer(sentence[:MAX_SENTENCE], gone.end()))
    return [p for p in dict.fromkeys(found) if p not in removed][:MAX_FILES]


def _sentences(task: str) -> list[str]:
    """The task's sentences: code blocks and headings aside, each list item on its own, the
    lines of a paragraph joined."""
    task = _FENCED.sub("\n\n", task)
    blocks: list[list[str]] = []
    for line in task.splitlines():
        text = line.strip()
        if not text or text.startswith("#") or line.startswith(("    ", "\t")):
            blocks.append([])  # a blank line, a heading or an indented example ends a block
            continue
        item = _LIST_ITEM.match(text)
        if item or not blocks:
            blocks.append([])
        blocks[-1].append(item.group(1) if item else text)
    return [s for b in blocks if b for s in _SENTENCE_END.split(" ".join(b))]


def _objects(sentence: str) -> list[str]:
    """The paths that are the object of a write verb in `sentence`."""
    found: list[str] = []
    sentence = sentence[:MAX_SENTENCE]
    unsure = _UNSURE.search(sentence)  # "If ..., write", "Do not write", "You may write"
    verbs = list(_VERB.finditer(sentence))
    ends = [v.start() for v in verbs[1:]] + [len(sentence)] if verbs else []
    for verb, end in zip(verbs, ends, strict=True):
        if unsure is not None and unsure.start() < verb.start():
            break
        anchor, last_taken = verb.end(), False
        for span in _NAMED.finditer(sentence, verb.end(), end):  # up to the next verb
            between = sentence[anchor:span.start()]
            if _SENTENCE_STOP.search(between):
                break
            quoted = span.group(1) is not None
            path = (span.group(1) or span.group(2)).strip().removeprefix("./")
            right_after = anchor == verb.end() and (
                _LEAD_IN.fullmatch(between) is not None if quoted
                else not between.strip() and _AFTER_BARE.match(sentence, span.end()) is not None)
            taken = (_is_path(path) if quoted else _is_bare_path(path)) and (
                right_after
                or _DESTINATION.search(between) is not None
                or (last_taken and _NEXT_IN_LIST.fullmatch(between) is not None))
            if taken and work_file(path):
                found.append(path)
            anchor, last_taken = span.end(), taken
    return found


def _is_path(text: str) -> bool:
    return _PATH.fullmatch(text) is not None


def _is_bare_path(text: str) -> bool:
    """A path written without backticks: a name of two characters or more and an extension
    that starts with a letter ("out.txt", "notes/a.md"; not "e.g", "3.5")."""
    stem, _, ext = text.rpartition(".")
    return len(stem) > 1 and ext[:1].isalpha()


def work_file(path: str) -> bool:
    """A file of the job's work: not an input (documents/), not the workflow's, not memory."""
    return layout.deliverable_problem(path) is None and path not in MEMORY_FILES


_FENCED = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.M | re.S)
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,2}[.)])\s+(.*)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
_VERB = re.compile(r"\b(?:write|create|save|produce|generate|store)\b", re.I)
_REMOVE = re.compile(r"\b(?:delete|remove|rm)\b", re.I)
_UNSURE = re.compile(r"\b(?:if|unless|when|whenever|otherwise|optionally|not|never|without|"
                     r"may|might|can|could|nor)\b|n't\b", re.I)
# a span in backticks, or a word that looks like a path (taken only after a destination word)
_NAMED = re.compile(r"`([^`\n]+)`|(?<![\w./`-])((?:\./)?[\w-][\w/-]*(?:\.[\w-]+)*"
                    r"\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/-])")
_PATH = re.compile(r"(?:\./)?[\w-][\w./-]*\.[A-Za-z0-9]{1,5}")
_SENTENCE_STOP = re.compile(r"[;!?]|\.\s")
# what may stand between the verb and its first path: nothing, or a few words and a colon
_LEAD_IN = re.compile(r"\s*(?:[\w ,'-]{0,80}:)?\s*")
# what may follow a path without backticks right after the verb ("Create hello.py that ...";
# not "Write Node.js code")
_AFTER_BARE = re.compile(r"\s*(?:$|[:,;.(]|(?:with|that|which|containing|listing|holding|"
                         r"saying|where|and)\b)", re.I)
_DESTINATION = re.compile(r"\b(?:to|into|as|named|called|file|files)\s*:?\s*$", re.I)
# between two paths of one list: a few words, then a comma or "and"
_NEXT_IN_LIST = re.compile(r"[\w ()'-]{0,60}(?:,\s*(?:and\s+)?|\s+and\s+)", re.I)
