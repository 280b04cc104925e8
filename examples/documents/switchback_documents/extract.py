"""Pure document processing: text extraction and structure-aware chunking.

Contract:
- No I/O. Callers read files and hand over ``(filename, bytes)``; everything returned is
  plain data (frozen dataclasses, dicts). Deterministic: same input, same output.
- ``extract_text`` picks the parser by file extension; each is well kept and needs no
  system library or service: .md/.markdown/.txt are decoded (UTF-8, else cp1252), .pdf
  uses pypdf (pure Python), .html/.htm the stdlib ``html.parser``, .docx python-docx (pure
  Python on lxml wheels: body paragraphs and tables in order, "Heading N"/"Title" styles as
  '#' lines, list paragraphs as "- " lines, a "| a | b |" line per table row; no headers,
  footers, comments). Text is normalized (``\\n`` line ends, no trailing blanks, at most one
  blank line in a row); PDF pages are joined by a blank line, ``page_offsets`` say where each
  starts. ``DocumentError.code``: unsupported_format, unreadable_document, empty_document.
- ``chunk_text`` splits at headings first, then at paragraph breaks, sentence ends, line
  breaks and finally whitespace, packing neighbouring pieces of one section greedily up to
  ``max_chars`` (a trailing piece shorter than ``min_chars`` is topped up from its
  predecessor). A chunk only exceeds ``max_chars`` when it is a single unbreakable word.
  Invariant: ``doc.text[c.start:c.end] == c.text`` for every chunk; chunks are ordered,
  never overlap, never start or end with whitespace and are never empty.
- Headings: '#' lines for markdown, html and docx (their headings become '#' lines); for
  text and pdf, numbered lines ("1. Scope", "2.1 Invoices"), "§ 147 ..."/"Art. 17 ..."
  lines and short ALL-CAPS lines. A heading-only section is prepended to its first subsection.
  ``Chunk.page`` is the 1-based page of the chunk start for every pdf chunk, else None.
"""

from __future__ import annotations

import io
import re
from bisect import bisect_right
from dataclasses import dataclass
from html.parser import HTMLParser
from itertools import accumulate

_FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".pdf": "pdf",
            ".html": "html", ".htm": "html", ".docx": "docx"}


class DocumentError(Exception):
    """A document could not be turned into text; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ExtractedDocument:
    text: str
    format: str
    pages: int | None
    page_offsets: list[int]
    sections: int


@dataclass(frozen=True)
class Chunk:
    id: str
    source: str
    text: str
    start: int
    end: int
    page: int | None
    heading_path: list[str]


# ---------------------------------------------------------------- extraction

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufeff]")


def _normalize(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x0c", "\n")
    text = _CONTROL.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _pdf_pages(filename: str, data: bytes) -> list[str]:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            reader.decrypt("")
        return [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # pypdf raises many different error types
        raise DocumentError("unreadable_document",
                            f"{filename}: cannot read PDF ({type(exc).__name__}: {exc})") from exc


_BLOCKS = {"p", "div", "section", "article", "header", "footer", "main", "nav", "aside",
           "ul", "ol", "li", "table", "thead", "tbody", "tr", "blockquote", "pre", "hr", "dl",
           "dt", "dd", "figure", "figcaption", "address", "form", "fieldset", "body", "details",
           "summary", "h1", "h2", "h3", "h4", "h5", "h6"}
_SKIP = {"script", "style", "noscript", "template", "title", "svg"}


class _HTMLText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.buf: list[str] = []
        self.skip = self.pre = self.heading = 0
        self.prefix = ""

    def flush(self) -> None:
        raw, self.buf = "".join(self.buf), []
        lines = [line.rstrip() if self.pre else " ".join(line.split())
                 for line in raw.split("\n")]
        text = "\n".join(lines).strip("\n")
        if not text.strip():
            return
        if self.heading:
            text = "#" * self.heading + " " + " ".join(text.split())
        elif self.prefix:
            text, self.prefix = self.prefix + text.lstrip(), ""
        self.blocks.append(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag == "br":
            self.buf.append("\n")
        elif tag in ("td", "th"):
            self.buf.append(" ")
        elif tag in _BLOCKS:
            self.flush()
            if tag == "pre":
                self.pre += 1
            elif tag == "li":
                self.prefix = "- "
            elif tag[0] == "h" and tag[1:].isdigit():
                self.heading = int(tag[1:])

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCKS:
            self.flush()
            if tag == "pre":
                self.pre = max(0, self.pre - 1)
            elif tag[0] == "h" and tag[1:].isdigit():
                self.heading = 0

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.buf.append(data if self.pre else re.sub(r"\s+", " ", data))


def _html_to_text(source: str) -> str:
    parser = _HTMLText()
    parser.feed(source)
    parser.close()
    parser.flush()
    return "\n\n".join(parser.blocks)


_DOCX_HEADING = re.compile(r"heading ([1-9])|title")


def _docx_text(filename: str, data: bytes) -> str:
    from docx import Document
    from docx.table import Table

    try:
        blocks = list(Document(io.BytesIO(data)).iter_inner_content())
    except Exception as exc:  # zip, XML and package errors
        raise DocumentError("unreadable_document",
                            f"{filename}: cannot read DOCX ({type(exc).__name__}: {exc})") from exc
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Table):  # row.cells repeats a merged cell: keep it once
            rows = [[" ".join(c.text.split()).replace("|", "\\|")
                     for i, c in enumerate(cs) if not i or c._tc is not cs[i - 1]._tc]
                    for cs in (r.cells for r in block.rows)]
            out += ["\n".join("| " + " | ".join(r) + " |" for r in rows if any(r)), ""]
            continue
        names: list[str] = []
        style = block.style
        while style is not None and len(names) < 5:  # a style may be based on "Heading N"
            names.append((style.name or "").lower())
            style = style.base_style
        head = next((m for n in names if (m := _DOCX_HEADING.fullmatch(n))), None)
        text = " ".join(block.text.split()) if head else block.text.strip()
        numbered = getattr(block._p.pPr, "numPr", None) is not None
        listed = numbered or (names or [""])[0].startswith("list")
        prefix = "#" * int(head.group(1) or 1) + " " if head else "- " if listed else ""
        out += [prefix + text, ""] if text else []
    return "\n".join(out)


def extract_text(filename: str, data: bytes) -> ExtractedDocument:
    """Turn raw file bytes into normalized text; the extension selects the parser."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    ext = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    fmt = _FORMATS.get(ext)
    if fmt is None:
        supported = ", ".join(sorted(_FORMATS))
        raise DocumentError("unsupported_format",
                            f"{filename}: unsupported extension {ext or '(none)'!r}; "
                            f"supported: {supported}")
    pages: int | None = None
    offsets = [0]
    if fmt == "pdf":
        page_texts = [_normalize(t) for t in _pdf_pages(filename, data)]
        pages, text = len(page_texts), "\n\n".join(page_texts)
        offsets = list(accumulate((len(t) + 2 for t in page_texts[:-1]), initial=0))
    elif fmt == "docx":
        text = _normalize(_docx_text(filename, data))
    else:
        text = _decode(data)
        text = _normalize(_html_to_text(text) if fmt == "html" else text)
    if not text.strip():
        raise DocumentError("empty_document", f"{filename}: document contains no text")
    return ExtractedDocument(text=text, format=fmt, pages=pages, page_offsets=offsets,
                             sections=len(_find_headings(text, fmt)))


# ---------------------------------------------------------------- headings

_MD_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_PARA_HEADING = re.compile(r"(§{1,2}|Art\.|Artikel|Article)\s*\d+[a-z]?\b")
_NUM_HEADING = re.compile(r"(\d{1,2}(?:\.\d{1,2})*)(\.)?\s+[A-ZÄÖÜ\"'„(]")


def _text_heading_level(line: str) -> int:
    """Heading level of a plain-text/PDF line, 0 if it does not look like a heading."""
    if not line or len(line) > 100 or line[-1] in ".,;:":
        return 0
    if _PARA_HEADING.match(line):
        return 2
    num = _NUM_HEADING.match(line)
    if num and len(line) <= 80 and (num.group(2) or "." in num.group(1)):
        return 2 + len(num.group(1).split("."))
    letters = [ch for ch in line if ch.isalpha()]
    if (len(letters) >= 4 and len(line) <= 60 and len(line.split()) <= 8
            and not any(ch.islower() for ch in letters)):
        return 1
    return 0


def _find_headings(text: str, fmt: str) -> list[tuple[int, int, int, str]]:
    """(line start, line end, level, title) per heading line; '#' lines for markdown/html."""
    found: list[tuple[int, int, int, str]] = []
    pos, fenced = 0, False
    for line in text.split("\n"):
        end = pos + len(line)
        if fmt in ("markdown", "html", "docx"):
            if _FENCE.match(line):
                fenced = not fenced
            elif not fenced and (m := _MD_HEADING.match(line)):
                found.append((pos, end, len(m.group(1)), m.group(2).strip()))
        elif level := _text_heading_level(line.strip()):
            start, title = pos, " ".join(line.split())
            if level == 1 and found and found[-1][2] == 1 and found[-1][1] == pos - 1:
                start, _, _, first = found.pop()  # multi-line ALL CAPS title
                title = f"{first} {title}"
            found.append((start, end, level, title))
        pos = end + 1
    return found


# ---------------------------------------------------------------- chunking

_ABBREVIATIONS = {"art", "abs", "nr", "vgl", "bzw", "ggf", "z", "b", "u", "a", "s", "e", "g",
                  "i", "d", "h", "etc", "ca", "dr", "mr", "ms", "no", "para", "sec", "ff", "inkl",
                  "usw", "gem", "lit", "buchst", "satz", "st", "vs", "cf", "approx"}
_SENTENCE_END = re.compile(r"[.!?…][\"'”’»)\]]*\s+(?=\S)")
_LAST_WORD = re.compile(r"\S*$")
_SPACE = re.compile(r"\s")


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) so that it neither starts nor ends with whitespace."""
    inner = text[start:end].lstrip()
    start += end - start - len(inner)
    return start, start + len(inner.rstrip())


# split levels, coarsest first: paragraphs, sentences, lines (then words, see _word_pieces)
_SPLITTERS = (re.compile(r"\n[ \t]*\n"), _SENTENCE_END, re.compile(r"\n"))


def _cuts(level: int, text: str, start: int, end: int) -> list[int]:
    """Absolute positions in (start, end) where a piece may begin at this split level."""
    cuts = []
    for m in _SPLITTERS[level].finditer(text, start, end):
        if _SPLITTERS[level] is _SENTENCE_END:  # skip abbreviations such as "Art." / "e.g."
            before = _LAST_WORD.search(text, max(start, m.start() - 40), m.start())
            word = before.group().rsplit(".", 1)[-1].lower().strip("(\"'„") if before else ""
            if word in _ABBREVIATIONS or word.isdigit() or text[m.end():m.end() + 1].islower():
                continue
        cuts.append(m.end())
    return cuts


def _word_pieces(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    pieces = []
    while start < end:
        if end - start <= max_chars:
            pieces.append((start, end))
            break
        window = text[start:start + max_chars + 1]
        cut = max((i for i, ch in enumerate(window) if ch.isspace()), default=0)
        if cut == 0:  # one word longer than max_chars: keep it whole
            m = _SPACE.search(text, start + max_chars, end)
            cut = (m.start() if m else end) - start
        pieces.append(_trim(text, start, start + cut))
        start = _trim(text, start + cut, end)[0]
    return pieces


def _pieces(text: str, start: int, end: int, max_chars: int,
            level: int = 0) -> list[tuple[int, int]]:
    """Trimmed spans covering [start, end), each <= max_chars unless unbreakable."""
    start, end = _trim(text, start, end)
    if start >= end:
        return []
    if end - start <= max_chars:
        return [(start, end)]
    if level == len(_SPLITTERS):
        return _word_pieces(text, start, end, max_chars)
    out: list[tuple[int, int]] = []
    prev = start
    for cut in [*_cuts(level, text, start, end), end]:
        out.extend(_pieces(text, prev, cut, max_chars, level + 1))
        prev = cut
    return out


def _sections(text: str, fmt: str) -> list[tuple[int, int, list[str]]]:
    """(start, end, heading_path) per section, in order, covering the whole text."""
    heads = _find_headings(text, fmt)
    raw: list[tuple[int, int, int, list[str]]] = []  # start, body start, end, path
    if not heads or heads[0][0] > 0:
        raw.append((0, 0, heads[0][0] if heads else len(text), []))
    stack: list[tuple[int, str]] = []
    for i, (h_start, h_end, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        raw.append((h_start, h_end, end, [t for _, t in stack]))
    out: list[tuple[int, int, list[str]]] = []
    pending: int | None = None
    for i, (start, body, end, path) in enumerate(raw):
        start, pending = start if pending is None else pending, None
        nxt = raw[i + 1][3] if i + 1 < len(raw) else []
        if path and nxt[:len(path)] == path != nxt and not text[body:end].strip():
            pending = start  # heading-only section: prepend it to its first subsection
        else:
            out.append((start, end, path))
    return out


def chunk_text(source: str, doc: ExtractedDocument, *, start_index: int = 1,
               max_chars: int = 1500, min_chars: int = 200) -> list[Chunk]:
    """Split ``doc.text`` into ordered, non-overlapping chunks (see module docstring)."""
    if max_chars < 1 or min_chars < 0 or start_index < 0:
        raise ValueError("max_chars must be >= 1, min_chars and start_index >= 0")
    text = doc.text
    chunks: list[Chunk] = []
    for sec_start, sec_end, path in _sections(text, doc.format):
        groups: list[list[tuple[int, int]]] = []
        for piece in _pieces(text, sec_start, sec_end, max_chars):
            if groups and piece[1] - groups[-1][0][0] <= max_chars:
                groups[-1].append(piece)
            else:
                groups.append([piece])
        # top up a tiny trailing group with pieces from its predecessor
        while (len(groups) > 1 and len(groups[-2]) > 1
               and groups[-1][-1][1] - groups[-1][0][0] < min_chars):
            moved = groups[-2][-1]
            rest = groups[-2][-2][1] - groups[-2][0][0]
            if groups[-1][-1][1] - moved[0] > max_chars or rest < min_chars:
                break
            groups[-1].insert(0, groups[-2].pop())
        for group in groups:
            start, end = group[0][0], group[-1][1]
            page = bisect_right(doc.page_offsets, start) if doc.pages is not None else None
            chunks.append(Chunk(id=f"chunk_{start_index + len(chunks):03d}", source=source,
                                text=text[start:end], start=start, end=end, page=page,
                                heading_path=list(path)))
    return chunks


def manifest_entry(chunk: Chunk) -> dict:
    """JSON-ready description of a chunk for chunks/manifest.json."""
    return {"id": chunk.id, "source": chunk.source, "page": chunk.page,
            "heading_path": list(chunk.heading_path), "start": chunk.start, "end": chunk.end,
            "chars": chunk.end - chunk.start}
