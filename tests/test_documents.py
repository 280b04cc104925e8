import io
from pathlib import Path

import pytest

from switchback_documents.extract import (
    Chunk,
    DocumentError,
    ExtractedDocument,
    chunk_text,
    extract_text,
    manifest_entry,
)
from tests.pdf_fixture import SAMPLE_PAGES, make_pdf

SAMPLES = Path(__file__).resolve().parents[1] / "configs" / "creator" / "documents"

NESTED_MD = """# GoBD

Einleitung zu den Grundsätzen.

## Aufbewahrung

### Fristen

Bücher sind zehn Jahre aufzubewahren.

### Form

Elektronische Unterlagen müssen elektronisch aufbewahrt werden.

## Unveränderbarkeit

Buchungen dürfen nicht verändert werden.

```
# kein Heading im Codeblock
```
"""


def assert_invariants(doc: ExtractedDocument, chunks: list[Chunk]) -> None:
    assert chunks
    previous_end = 0
    for chunk in chunks:
        assert doc.text[chunk.start:chunk.end] == chunk.text
        assert chunk.start >= previous_end
        assert chunk.text.strip() == chunk.text != ""
        previous_end = chunk.end


def test_markdown_extraction_normalizes_text() -> None:
    data = "# Titel  \r\n\r\n\r\n\r\nZeile mit Leerzeichen   \r\nÄnderung\r\n".encode()
    doc = extract_text("notes/Readme.MD", data)
    assert doc.format == "markdown"
    assert doc.text == "# Titel\n\nZeile mit Leerzeichen\nÄnderung"
    assert (doc.pages, doc.page_offsets, doc.sections) == (None, [0], 1)


def test_text_extraction_falls_back_to_cp1252_and_counts_headings() -> None:
    data = "RECORDS POLICY\n\n1. Scope\nGrößere Belege.\n\n§ 147 Aufbewahrung\nText\n"
    doc = extract_text("policy.txt", data.encode("cp1252"))
    assert doc.format == "text"
    assert "Größere Belege." in doc.text
    assert doc.sections == 3


def test_html_extraction() -> None:
    html = b"""<html><head><title>Ignored</title><style>p {color: red}</style></head>
    <body><h1>Policy</h1><script>var x = 1;</script>
    <p>Invoices must   be
       retained.</p><h2>Erasure &amp; retention</h2><ul><li>First</li><li>Second</li></ul>
    <div>Line one<br>Line two</div></body></html>"""
    doc = extract_text("page.html", html)
    assert doc.format == "html"
    assert doc.sections == 2
    assert doc.text == ("# Policy\n\nInvoices must be retained.\n\n## Erasure & retention\n\n"
                        "- First\n\n- Second\n\nLine one\nLine two")
    chunks = chunk_text("page.html", doc, max_chars=40, min_chars=0)
    assert_invariants(doc, chunks)
    assert chunks[-1].heading_path == ["Policy", "Erasure & retention"]


def test_pdf_extraction_keeps_umlauts_and_pages() -> None:
    pdf = make_pdf(["Prüfung der Größe (Übergabe) \\ Maß\nzweite Zeile", "1. Seite zwei\nText"])
    doc = extract_text("scan.pdf", pdf)
    assert doc.format == "pdf"
    assert doc.pages == 2
    assert doc.text.startswith("Prüfung der Größe (Übergabe) \\ Maß\nzweite Zeile")
    assert doc.page_offsets[0] == 0
    assert doc.text[doc.page_offsets[1]:].startswith("1. Seite zwei")
    assert doc.sections == 1


def test_multi_page_pdf_chunks_carry_page_numbers() -> None:
    doc = extract_text("policy.pdf", make_pdf(SAMPLE_PAGES))
    chunks = chunk_text("policy.pdf", doc, max_chars=400)
    assert_invariants(doc, chunks)
    assert {c.page for c in chunks} == {1, 2}
    for chunk in chunks:
        expected = 2 if chunk.start >= doc.page_offsets[1] else 1
        assert chunk.page == expected
    erasure = next(c for c in chunks if "erased without undue delay" in c.text)
    assert erasure.page == 2
    assert erasure.heading_path[-2:] == ["4. Personal data", "4.2 Erasure"]


def test_unsupported_extension() -> None:
    with pytest.raises(DocumentError) as info:
        extract_text("report.odt", b"PK\x03\x04")
    assert info.value.code == "unsupported_format"
    assert ".docx" in str(info.value) and ".pdf" in str(info.value)
    with pytest.raises(DocumentError) as info:
        extract_text("README", b"text")
    assert info.value.code == "unsupported_format"


def make_docx() -> bytes:
    """A .docx as Word writes it: title, headings, body, lists, a table with a merged cell."""
    from docx import Document
    from docx.enum.style import WD_STYLE_TYPE

    d = Document()
    custom = d.styles.add_style("Policy Heading", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = d.styles["Heading 2"]
    d.add_heading("Aufbewahrungsrichtlinie", level=0)
    d.add_paragraph("Diese Richtlinie gilt für alle   Gesellschaften.")
    d.add_heading("1 Aufbewahrung", level=1)
    d.add_paragraph("Buchungsbelege müssen acht Jahre aufbewahrt werden.")
    d.add_paragraph("Rechnungen", style="List Bullet")
    d.add_paragraph("Kontoauszüge", style="List Number")
    d.add_paragraph("")
    d.add_paragraph("Fristen", style="Policy Heading")
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["Unterlage", "Frist", "Norm"],
                             ["Rechnung", "8 Jahre", "§ 147 | AO"]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    table.cell(2, 0).merge(table.cell(2, 1)).text = "Handelsbriefe\nund Geschäftsbriefe"
    table.cell(2, 2).text = "6 Jahre"
    d.add_heading("Löschung", level=3)
    d.add_paragraph("Personenbezogene Daten sind nach Fristablauf zu löschen.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_docx_extraction_headings_lists_and_tables() -> None:
    doc = extract_text("documents/Richtlinie.DOCX", make_docx())
    assert doc.format == "docx"
    assert (doc.pages, doc.page_offsets, doc.sections) == (None, [0], 4)
    assert doc.text == (
        "# Aufbewahrungsrichtlinie\n\n"
        "Diese Richtlinie gilt für alle   Gesellschaften.\n\n"
        "# 1 Aufbewahrung\n\n"
        "Buchungsbelege müssen acht Jahre aufbewahrt werden.\n\n"
        "- Rechnungen\n\n- Kontoauszüge\n\n"
        "## Fristen\n\n"
        "| Unterlage | Frist | Norm |\n"
        "| Rechnung | 8 Jahre | § 147 \\| AO |\n"
        "| Handelsbriefe und Geschäftsbriefe | 6 Jahre |\n\n"
        "### Löschung\n\n"
        "Personenbezogene Daten sind nach Fristablauf zu löschen.")
    chunks = chunk_text("Richtlinie.docx", doc, max_chars=120, min_chars=0)
    assert_invariants(doc, chunks)
    assert chunks[-1].heading_path == ["1 Aufbewahrung", "Fristen", "Löschung"]
    assert any(c.heading_path == ["1 Aufbewahrung", "Fristen"] and "| Rechnung |" in c.text
               for c in chunks)


@pytest.mark.parametrize(("data", "code"), [
    (b"PK\x03\x04 not a real zip", "unreadable_document"),
    (b"plain text renamed to .docx", "unreadable_document"),
])
def test_broken_docx(data: bytes, code: str) -> None:
    with pytest.raises(DocumentError) as info:
        extract_text("broken.docx", data)
    assert info.value.code == code and "broken.docx" in str(info.value)


def test_empty_docx() -> None:
    from docx import Document

    buf = io.BytesIO()
    d = Document()
    d.add_paragraph("   ")
    d.save(buf)
    with pytest.raises(DocumentError) as info:
        extract_text("empty.docx", buf.getvalue())
    assert info.value.code == "empty_document"


def test_corrupt_pdf_is_unreadable() -> None:
    with pytest.raises(DocumentError) as info:
        extract_text("broken.pdf", b"%PDF-1.4\nthis is not really a pdf")
    assert info.value.code == "unreadable_document"


@pytest.mark.parametrize(
    ("name", "data"),
    [("empty.txt", b""), ("blank.md", b"  \n\t\n  "), ("blank.html", b"<p> </p><script>x</script>"),
     ("blank.pdf", make_pdf(["", " "]))],
)
def test_empty_document(name: str, data: bytes) -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(name, data)
    assert info.value.code == "empty_document"


@pytest.mark.parametrize("name", ["gobd_retention.md", "gdpr_erasure.txt", "records_policy.pdf"])
@pytest.mark.parametrize("max_chars", [1500, 300, 80])
def test_sample_documents_keep_offset_invariant(name: str, max_chars: int) -> None:
    path = SAMPLES / name
    doc = extract_text(str(path), path.read_bytes())
    chunks = chunk_text(str(path), doc, max_chars=max_chars, min_chars=min(200, max_chars // 2))
    assert_invariants(doc, chunks)
    assert all(len(c.text) <= max_chars for c in chunks)
    assert all(c.source == str(path) for c in chunks)
    assert doc.sections >= 5
    joined = " ".join(doc.text.split())
    assert " ".join(" ".join(c.text for c in chunks).split()) == joined


def test_sample_pdf_matches_fixture() -> None:
    assert (SAMPLES / "records_policy.pdf").read_bytes() == make_pdf(SAMPLE_PAGES)


def test_long_single_paragraph_splits_at_sentences() -> None:
    sentence = "Rechnungen sind gemäß Art. 5 Abs. 1 zehn Jahre aufzubewahren, z. B. digital. "
    doc = extract_text("long.txt", (sentence * 60).encode())
    chunks = chunk_text("long.txt", doc, max_chars=500, min_chars=100)
    assert len(chunks) > 5
    assert_invariants(doc, chunks)
    for chunk in chunks:
        assert len(chunk.text) <= 500
        assert chunk.text.startswith("Rechnungen") and chunk.text.endswith("digital.")


def test_heading_paths_for_nested_markdown() -> None:
    doc = extract_text("nested.md", NESTED_MD.encode())
    assert doc.sections == 5
    chunks = chunk_text("nested.md", doc, max_chars=1500, min_chars=0)
    assert_invariants(doc, chunks)
    paths = [c.heading_path for c in chunks]
    assert paths == [
        ["GoBD"],
        ["GoBD", "Aufbewahrung", "Fristen"],
        ["GoBD", "Aufbewahrung", "Form"],
        ["GoBD", "Unveränderbarkeit"],
    ]
    # the heading-only "## Aufbewahrung" section is prepended to its first subsection
    assert chunks[1].text.startswith("## Aufbewahrung\n\n### Fristen")
    assert "# kein Heading" in chunks[3].text


def test_numbered_and_article_headings_in_text() -> None:
    text = ("Art. 17 Right to erasure\nThe controller shall erase data.\n\n"
            "1.2 Exceptions\nNot where retention is required.\n\n"
            "§ 147 Ordnungsvorschriften\nUnterlagen sind aufzubewahren.\n")
    doc = extract_text("law.txt", text.encode())
    chunks = chunk_text("law.txt", doc, min_chars=0)
    assert [c.heading_path for c in chunks] == [
        ["Art. 17 Right to erasure"],
        ["Art. 17 Right to erasure", "1.2 Exceptions"],
        ["§ 147 Ordnungsvorschriften"],
    ]


def test_numbering_continues_from_start_index() -> None:
    doc = extract_text("nested.md", NESTED_MD.encode())
    chunks = chunk_text("docs/nested.md", doc, start_index=7, min_chars=0)
    assert [c.id for c in chunks] == ["chunk_007", "chunk_008", "chunk_009", "chunk_010"]
    entry = manifest_entry(chunks[0])
    assert entry == {"id": "chunk_007", "source": "docs/nested.md", "page": None,
                     "heading_path": ["GoBD"], "start": 0, "end": chunks[0].end,
                     "chars": len(chunks[0].text)}


def test_small_pieces_are_merged_within_section() -> None:
    text = "# A\n\n" + "\n\n".join(f"Absatz {i} muss kurz sein." for i in range(30))
    doc = extract_text("short.md", text.encode())
    chunks = chunk_text("short.md", doc, max_chars=300, min_chars=100)
    assert_invariants(doc, chunks)
    assert all(100 <= len(c.text) <= 300 for c in chunks)
    assert all(c.heading_path == ["A"] for c in chunks)


def test_tiny_trailing_piece_is_topped_up_from_predecessor() -> None:
    paragraphs = ["a" * 20 + " " + "b" * 24, "c" * 20 + " " + "d" * 24, "e" * 30]
    doc = extract_text("tail.txt", "\n\n".join(paragraphs).encode())
    chunks = chunk_text("tail.txt", doc, max_chars=100, min_chars=40)
    assert [c.text for c in chunks] == [paragraphs[0], "\n\n".join(paragraphs[1:])]
    chunks = chunk_text("tail.txt", doc, max_chars=100, min_chars=0)
    assert [c.text for c in chunks] == ["\n\n".join(paragraphs[:2]), paragraphs[2]]


def test_heading_only_sections_do_not_swallow_siblings() -> None:
    doc = extract_text("titles.md", b"# A\n## B\n# C")
    chunks = chunk_text("titles.md", doc, min_chars=0)
    assert [(c.text, c.heading_path) for c in chunks] == [
        ("# A\n## B", ["A", "B"]), ("# C", ["C"])]


def test_max_chars_respected_except_unbreakable_word() -> None:
    word = "Aufbewahrungs" * 20  # 260 characters, no whitespace
    text = "kurz " * 30 + word + " danach " + "ende " * 30
    doc = extract_text("words.txt", text.encode())
    chunks = chunk_text("words.txt", doc, max_chars=50, min_chars=0)
    assert_invariants(doc, chunks)
    for chunk in chunks:
        assert len(chunk.text) <= 50 or chunk.text == word
    assert word in [c.text for c in chunks]
    # no chunk boundary falls inside a word
    for chunk in chunks:
        assert chunk.start == 0 or doc.text[chunk.start - 1].isspace()
        assert chunk.end == len(doc.text) or doc.text[chunk.end].isspace()


def test_invalid_chunk_parameters() -> None:
    doc = extract_text("a.txt", b"text")
    with pytest.raises(ValueError):
        chunk_text("a.txt", doc, max_chars=0)
