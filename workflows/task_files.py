"""The files a task's own words ask the job to write (the small model profile's deliverables
of a job that declares none; docs/profiles.md).

A user who runs a job without a `deliverables:` list still wrote them into the task:
"Add the numbers ... and write the total to `output/total.txt`". The 1.5B model ended such
jobs `completed` with the files unwritten (an undeclared eval-files run named one of its
three notes), so with the profile the workflow holds the job to the files its task names
this way. A file taken wrongly would hold the job to a file nobody asked for, a file
missed only leaves the job as it was without the profile: every rule leans to missing.
Sentence by sentence (a list item is a sentence), only these shapes count:

    an imperative write verb (write, create, save, produce, generate, make, deliver, store,
    put) - at the sentence's start, after "and", "then", a label ("Step 1:", "Your task:")
    or "you must" - whose object is a file name with a known extension:
      - right after the verb, or after a few words that name the file and a colon
            "Write `shopping.md`: a list ..."   "Write three notes: `a.md`, `b.md` and `c.md`."
            "Write a Python script `fetch.py` that ..."   "Create hello.py that prints hello"
      - after a destination word (to, into, as, named, called; "in" after save, store,
        put, or after a short object of write), the word before it naming what is written
        ("write the total to `output/total.txt`", "save the list in primes.txt", "write
        the answer in answer.md"); store and put take only this one
      - the next name of such a list ("`a.txt` containing alpha, `b.txt` containing beta",
        "`hello.py` that prints hello, and `README.md`")
    A name not in backticks: right after the verb with a clause after it, or after words
    with a file noun ("a JSON file data/config.json", "three files in the workspace:
    a.txt, ..."); make takes only this one. And a passive request "... should (must) be
    written to `out.txt`" in a sentence without a condition (not a description: "the
    output is written to", "a script whose output should be written to"). "in" counts only
    where the clause ends at the name ("save the rows in `raw.csv` that ..." is a read).

Never a deliverable: a name after a relative clause or a preposition of another sense
("Write a script that reads `a.csv`", "Write a summary of `in.md`", "Write a reply to
`email.txt`", "... in the same format as `example.md`"); a verb after a condition, a
negation or a choice ("If it fails, write ...", "Do not create ...", "You may write ...")
or a name followed by one ("Write the errors to `errors.txt`, if any"); examples ("For
example, write ..."), quotes (`>`), HTML comments, code blocks, a list under a lead line or
a heading that makes it conditional or optional; a name without a known extension
(`1.2.3`, `os.path.join`, `example.com`); documents/, workspace/, the workflow's files,
the memory files; a file the task says to delete. Pure text work in the workflow task:
linear in the text, which is read up to a bound.
"""

from __future__ import annotations

import re

from workflows.contract import layout

MAX_FILES = 20
MAX_TASK = 50_000  # characters of a task read (the workflow runs this: it stays fast)
MAX_SENTENCE = 2_000  # characters of one sentence read (a longer one is no plain instruction)
MAX_VERBS = 8  # verbs of one sentence read
MAX_NAMES = 40  # names after one verb read
AFTER_NAME = 200  # characters after a name read for a condition or a choice
EXTENSIONS = frozenset(
    "md markdown txt text csv tsv json jsonl ndjson yaml yml toml ini cfg conf env xml html "
    "htm css scss js mjs ts jsx tsx py ipynb sh bash zsh ps1 rb go rs java kt scala c h cc "
    "cpp hpp cs php sql r jl swift lua pl tex bib rst adoc org log diff patch dot mmd svg "
    "png jpg jpeg gif pdf docx xlsx pptx odt zip gz tar db sqlite parquet dat out".split())


def named(task: str) -> list[str]:
    """The files `task` (markdown) asks to be written, in order, at most MAX_FILES (in its
    first MAX_TASK characters)."""
    found: list[str] = []
    removed: set[str] = set()  # a file the task also says to delete is no deliverable
    for sentence, conditional in _sentences(task[:MAX_TASK]):
        taken, gone = _objects(sentence)
        found += [] if conditional else taken
        removed.update(gone)
    return [p for p in dict.fromkeys(found) if p not in removed][:MAX_FILES]


def without_code(task: str) -> str:
    """`task` with its fenced code blocks blanked out (line by line: linear in the text)."""
    lines, fenced = [], False
    for line in task.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return "\n".join(lines)


def _sentences(task: str) -> list[tuple[str, bool]]:
    """The task's sentences, each with whether it is conditional: code, quotes, comments and
    headings aside, each list item on its own, the lines of a paragraph joined. A list under
    a lead line that makes it conditional ("If the file exists:", "For example:") and a
    section whose heading does ("## Optional") are conditional."""
    task = _COMMENT.sub(" ", without_code(task))
    blocks: list[tuple[bool, list[str]]] = []
    section = lead = in_code = False
    blank = True
    for line in task.splitlines():
        text = line.strip()
        if not text:
            blank = True
            _end_block(blocks)
            continue
        indented = line.startswith(("    ", "\t"))
        in_code, blank = indented and (in_code or blank), False
        if in_code or text.startswith(">"):  # an indented code block, a quote
            _end_block(blocks)
            continue
        if text.startswith("#"):
            section, lead = _UNSURE_HEADING.search(text) is not None, False
            _end_block(blocks)
            continue
        item = LIST_ITEM.match(text)
        if item is None and not indented:  # a paragraph's line: a lead line holds its list
            lead = text.endswith(":") and (_UNSURE.search(text) or _EXAMPLE.search(text)) \
                is not None
        if item or not blocks or not blocks[-1][1]:
            blocks.append((section or (item is not None and lead), []))
        blocks[-1][1].append(item.group(1) if item else text)
    return [(" ".join(s.split()), conditional) for conditional, lines in blocks if lines
            for s in _SENTENCE_END.split(" ".join(lines)[:MAX_SENTENCE * 20])]


def _end_block(blocks: list[tuple[bool, list[str]]]) -> None:
    """The current block ends (a new one starts only once it has a line)."""
    if blocks and blocks[-1][1]:
        blocks.append((False, []))


def _objects(sentence: str) -> tuple[list[str], list[str]]:
    """(the files `sentence` asks to be written, the files it says to delete)."""
    sentence = _POLITE.sub("", sentence[:MAX_SENTENCE])
    if _EXAMPLE_START.match(sentence):
        return [], []
    masked = _NAMED_OR_QUOTED.sub(lambda m: "x" * len(m.group(0)), sentence)  # verbs outside
    unsure = _UNSURE.search(masked)  # names only: "Write `save.json`" has one verb
    verbs = list(_VERB.finditer(masked))[:MAX_VERBS]
    ends = [v.start() for v in verbs[1:]] + [len(sentence)] if verbs else []
    found: list[str] = []
    gone: list[str] = []
    for verb, end in zip(verbs, ends, strict=True):
        names = list(_NAMED.finditer(sentence, verb.end(), end))
        if verb.group(0).lower() in ("delete", "remove"):
            if unsure is None or unsure.start() > verb.start():
                gone += [_path(m) for m in names]
            continue
        if (unsure is not None and unsure.start() < verb.start()) or \
                not _IMPERATIVE.fullmatch(masked[:verb.start()]):
            continue  # "If ..., write", "Do not write", "a script that ... saves"
        word = verb.group(0).lower()
        anchor, last_taken, relative = verb.end(), False, False
        for span in names[:MAX_NAMES]:
            between = sentence[anchor:span.start()]
            if _SENTENCE_STOP.search(between) or _CHOICE.search(between):
                break
            path, quoted = _path(span), span.group(1) is not None
            # a relative clause since the verb ("a script that reads `a.csv`"): read once
            relative = relative or _RELATIVE.search(masked, anchor, span.start()) is not None
            first = anchor == verb.end()
            taken = _is_path(path, quoted) and (
                (not relative and first and word not in _DESTINATION_ONLY
                 and (word != "make" or _made_file(between, sentence, span))
                 and _first_object(between, quoted, sentence, span))
                or (not relative and _destination(
                    between, word, _IN_END.match(sentence, span.end()) is not None, first))
                # the next name of a list: a clause of the name before is that name's
                or (last_taken and _NEXT_IN_LIST.fullmatch(between) is not None
                    and not _OTHER_SENSE.search(between))
            ) and not _AFTER_UNSURE.match(masked[:span.end() + AFTER_NAME], span.end()) \
                and sentence[span.end():span.end() + 2] not in ("'s", "\u2019s")  # hello.txt's
            if taken and work_file(path) and not path.startswith("workspace/"):
                found.append(path)
            anchor, last_taken = span.end(), taken
    if unsure is None:
        for m in _PASSIVE.finditer(masked):
            if _NOT_A_REQUEST.search(masked, 0, m.start()):
                continue
            after = _NAMED.match(sentence, m.end())
            if after is not None and _is_path(p := _path(after), after.group(1) is not None) \
                    and work_file(p) and not p.startswith("workspace/"):
                found.append(p)
    return found, gone


def _made_file(between: str, sentence: str, span: re.Match[str]) -> bool:
    """make: only "make a (JSON) file x.json ..." ("make the script run.sh executable" is
    no file written)."""
    return _FILE_NOUN.search(between) is not None \
        and _AFTER_BARE.match(sentence, span.end()) is not None


def _destination(between: str, verb: str, clause_ends: bool, first: bool) -> bool:
    """Do the words `between` the verb (or the name before) and a name end in a word that
    makes the name the place written to? "the total to", "the list in" (save, store, put);
    "the answer in" (a short object of write, right after it); "in" only with the clause
    ending at the name; not "a reply to", "a summary of the errors in", "a function to parse
    the dates in", "the same columns as", "make the tests in". `clause_ends`: the clause
    ends at the name (_IN_END); `first`: no name came between the verb and this one."""
    if (m := _DESTINATION.search(between)) is not None or (
            verb in _IN_IS_DESTINATION and (m := _IN.search(between)) is not None):
        head = between[:m.start()].split()
        ends_clause = m.group(0).lower().strip() != "in" or clause_ends
        return (not head or _OTHER_SENSE.search(head[-1]) is None) \
            and not _SAME.search(between) and ends_clause  # "save the rows in `raw.csv` that"
    m = _IN.search(between) if verb == "write" and first else None
    return m is not None and clause_ends \
        and _SHORT_OBJECT.fullmatch(between[:m.start()]) is not None \
        and not _OTHER_SENSE.search(between) and not _TO.search(between) \
        and not _RELATIVE.search(between)


def _first_object(between: str, quoted: bool, sentence: str, span: re.Match[str]) -> bool:
    """Is the name at `span` the verb's first object, `between` the words before it? A name
    not in backticks only right after the verb (then a clause follows) or after words with a
    file noun ("a JSON file data.json", "two files, a.txt and b.txt", "three files in the
    workspace: a.txt, ...")."""
    if not between.strip():
        return quoted or _AFTER_BARE.match(sentence, span.end()) is not None
    naming = _NAMING.fullmatch(between.rstrip().removesuffix(",") + " ") is not None
    lead_in = _LEAD_IN.fullmatch(between) is not None and not _OTHER_SENSE.search(between)
    if quoted:
        return naming or lead_in
    return (naming or lead_in) and _FILE_NOUN.search(between) is not None


def _path(span: re.Match[str]) -> str:
    return (span.group(1) or span.group(2)).strip().removeprefix("./")


def _is_path(text: str, quoted: bool) -> bool:
    """A file name: a name (not a number; of two characters or more unless in backticks)
    and a known extension."""
    if _PATH.fullmatch(text) is None:
        return False
    stem, _, ext = text.rpartition(".")
    return ext.lower() in EXTENSIONS and len(stem) > (0 if quoted else 1) \
        and not stem.replace(".", "").isdigit()


def work_file(path: str) -> bool:
    """A file of the job's work: not an input (documents/), not the workflow's, not memory."""
    return layout.deliverable_problem(path) is None and path not in layout.MEMORY_FILES


_COMMENT = re.compile(r"<!--.*?-->", re.S)
LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,2}[.)])\s+(.*)")  # a markdown list item: its text
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
_POLITE = re.compile(r"^(?:please\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)", re.I)
_EXAMPLE_START = re.compile(r"(?:for\s+example|for\s+instance|example|e\.g\.|such\s+as|like)"
                            r"(?!\w)", re.I)
_EXAMPLE = re.compile(r"\b(?:for\s+example|for\s+instance|examples?|e\.g\.|such\s+as)(?!\w)",
                      re.I)
_VERB = re.compile(r"(?<![\w./`-])(?:write|create|save|produce|generate|make|deliver|store|put|"
                   r"delete|remove)(?![\w./`'-])", re.I)
# verbs whose object is what is kept, not the file: only a destination names the file
_DESTINATION_ONLY = frozenset({"store", "put"})
# verbs for which "in" names the destination as surely as "to" ("save the list in `a.txt`")
_IN_IS_DESTINATION = frozenset({"save", "store", "put"})
# before the verb: nothing, a sequence word, or an earlier clause joined by "and"/"then"
_IMPERATIVE = re.compile(r"\s*(?:(?:step|part|phase|stage|task)\s*\w{0,6}\s*[:.)-]\s*)?"
                         r"(?:your\s+(?:job|task)\s*(?::|is\s+to)\s*)?"
                         r"(?:(?:in|inside|at|under|within)\b[^,]{0,60},\s*)?"
                         r"(?:you\s+(?:must|should|need\s+to|have\s+to|are\s+to)\s+)?"
                         r"(?:(?:first|then|next|finally|lastly|also|now|afterwards|and)"
                         r",?\s+)*|.*(?:\band|\bthen|;)\s*(?:(?:then|also|finally)\s+)?", re.I)
_UNSURE = re.compile(r"\b(?:if|unless|when|whenever|otherwise|optional|optionally|not|never|"
                     r"without|may|might|can|could|nor|either|or|only|depending)\b|n't\b",
                     re.I)
_UNSURE_HEADING = re.compile(r"\b(?:optional|bonus|extra|stretch|examples?|if|alternatives?)\b",
                             re.I)
# after a name: a condition, a choice ("`a.md` or `b.md`", "..., or print them"); an "or"
# of the content aside ("`report.md` saying present or absent")
_AFTER_UNSURE = re.compile(r"[^:;.!?]*?\b(?:if|unless|when|whenever|only|otherwise|not|"
                           r"depending)\b|(?:(?!\b(?:saying|with|containing|listing|holding|"
                           r"that|which)\b)[^:;.!?])*?\bor\b|[^:;.!?]*?,\s*or\b", re.I)
_RELATIVE = re.compile(r"\b(?:that|which|who|whom|whose|where|while|how)\b", re.I)
# a span in backticks, or a word that looks like a path
_NAMED = re.compile(r"`([^`\n]+)`|(?<![\w./`@-])((?:\./)?[\w-][\w/-]*(?:\.[\w-]+)*"
                    r"\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/@-])")
_NAMED_OR_QUOTED = re.compile(r"`[^`\n]*`|(?<![\w./`@-])(?:\./)?[\w-][\w/-]*(?:\.[\w-]+)+")
_PATH = re.compile(r"(?:\./)?[\w-][\w./-]*\.[A-Za-z][A-Za-z0-9]{0,4}")
_SENTENCE_STOP = re.compile(r"[;!?]|\.\s")
# after a name that is not in backticks, right after the verb: a clause or the end
_AFTER_BARE = re.compile(r"\s*(?:$|[:,;.(]|(?:with|that|which|containing|listing|holding|"
                         r"saying|where|and|linking|describing|explaining|summari[sz]ing|"
                         r"showing|giving|naming|including|followed)\b)", re.I)
# the words that name what is written, before its name: "a Python script", "three files:"
_NAMING = re.compile(r"\s*(?:(?:the|a|an|new|one|two|three|four|five|six|seven|eight|nine|ten|"
                     r"\d+|short|small|simple|plain|single|separate|empty|final|text|markdown|"
                     r"json|csv|yaml|python|shell|bash|html|output|file|files|script|scripts|"
                     r"note|notes|module|program|page|report|document|list|table|summary|"
                     r"config|configuration|named|called)\s+)*", re.I)
_LEAD_IN = re.compile(r"\s*[\w ,'-]{0,80}:\s*")
_DESTINATION = re.compile(r"\b(?:to|into|as|named|called)\s*$", re.I)
_IN = re.compile(r"\bin\s*$", re.I)
# "write the answer in `answer.md`": a short object, no other sense, no purpose ("to parse")
_SHORT_OBJECT = re.compile(r"\s*(?:[\w'-]+\s+){0,4}", re.I)
# a name compared with, not written: "with the same columns as `raw.csv`"
_SAME = re.compile(r"\b(?:same|like|similar|such|each|every|these|those|following|format|"
                   r"style)\b", re.I)
_IN_END = re.compile(r"\s*(?:$|[.,;:)]|(?:and|with|one|each|listing|containing)\b)", re.I)
_CHOICE = re.compile(r",\s*or\b", re.I)
# before a passive: a description, not a request ("the output is written to", "a script
# whose output should be written to", "nothing is written to")
_NOT_A_REQUEST = re.compile(r"\b(?:that|which|whose|where|nothing|no)\b|;", re.I)
_TO = re.compile(r"\bto\b", re.I)
# the nouns that say the name after them is a file ("a JSON file data.json")
_FILE_NOUN = re.compile(r"\b(?:files?|scripts?|notes?|documents?|pages?|modules?|programs?)\b",
                        re.I)
# "The output should be written to `out/answer.txt`."
_PASSIVE = re.compile(r"\b(?:(?:should|must|shall|needs?\s+to|has\s+to|have\s+to)\s+be|"
                      r"(?:is|are)\s+to\s+be)\s+(?:written|saved|stored|put)\s+"
                      r"(?:to|in|into|as)\s+(?=\S)", re.I)
# words that give "to", "as", a list or a lead-in another sense than "this is the file"
_OTHER_SENSE = re.compile(
    r"\b(?:of|for|from|with|about|by|than|like|same|format|style|similar|each|these|those|"
    r"following|compar\w*|between|using|based|reply|response|guide|introduction|link|letter|"
    r"message|email|changes?|access|solution|pointer|reference|path|migration|upgrade|such|"
    r"example|instance)\b", re.I)
# between two names of one list: a few words, then a comma or "and"
_NEXT_IN_LIST = re.compile(r"[\w ()'-]{0,60}(?:,\s*(?:and\s+)?|\s+and\s+)", re.I)
