"""Tiny dependency-free PDF writer for tests and the demo's sample document.

``make_pdf(pages)`` writes one Helvetica text block per page (lines split on "\\n"). The font
uses WinAnsiEncoding and text is encoded cp1252 (non-ASCII bytes written as octal escapes),
so Latin-1 text such as German umlauts survives extraction with pypdf.

Regenerate the demo document with::

    .venv/bin/python -c "from tests.pdf_fixture import write_sample_pdf; write_sample_pdf()"
"""

from __future__ import annotations

from pathlib import Path

SAMPLE_PDF = Path(__file__).resolve().parents[1] / "configs/creator/documents/records_policy.pdf"


def _pdf_string(line: str) -> bytes:
    out = bytearray(b"(")
    for byte in line.encode("cp1252"):
        if byte in b"()\\":
            out += b"\\" + bytes([byte])
        elif 32 <= byte < 127:
            out.append(byte)
        else:
            out += b"\\%03o" % byte
    return bytes(out + b")")


def _content(text: str, font_size: int = 11, leading: int = 14) -> bytes:
    ops = [b"BT", b"/F1 %d Tf" % font_size, b"%d TL" % leading, b"72 770 Td"]
    for i, line in enumerate(text.split("\n")):
        ops.append((b"" if i == 0 else b"T* ") + _pdf_string(line) + b" Tj")
    ops.append(b"ET")
    return b"\n".join(ops)


def make_pdf(pages: list[str]) -> bytes:
    """Return the bytes of a valid PDF with one page per string in ``pages``."""
    n = len(pages)
    # object numbers: 1 catalog, 2 page tree, 3 font, then (page, content) pairs
    page_ids = [4 + 2 * i for i in range(n)]
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % p for p in page_ids)
        + b"] /Count %d >>" % n,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for page_id, text in zip(page_ids, pages, strict=True):
        stream = _content(text)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                       b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>"
                       % (page_id + 1))
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream
                       + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


SAMPLE_PAGES = [
    """NORTHWIND TRADING GMBH
RECORDS RETENTION POLICY

1. Purpose and scope
This policy defines how long business records and personal data are kept.
It applies to all departments, to paper records and to electronic records.
It implements the German bookkeeping principles (GoBD) and the GDPR.

2. Retention of accounting records
2.1 Books and annual accounts
Ledgers, journals, annual financial statements and inventories must be
retained for ten years. The period starts at the end of the calendar year
in which the last entry was made or the statement was prepared.
2.2 Invoices and vouchers
Invoices must be retained for ten years. Other accounting vouchers
(Buchungsbelege) such as receipts, bank statements and delivery notes
must be retained for at least eight years.
2.3 Commercial correspondence
Business letters received and copies of letters sent shall be kept
for six years.

3. Integrity of records
Records must not be altered or deleted during the retention period.
Every correction shall be logged so that the original entry remains
visible. The finance team is required to maintain a procedure
documentation (Verfahrensdokumentation) describing the accounting systems.""",
    """4. Personal data
4.1 Lawful basis
Personal data shall only be processed where a lawful basis exists.
Where processing relies on consent, the consent must be documented.
4.2 Erasure
Personal data shall be erased without undue delay once it is no longer
needed for the purpose for which it was collected, or when the data
subject withdraws consent and no other lawful basis applies.
Where a statutory retention period applies (see section 2), the data
must be restricted instead of erased and shall be erased at the end
of that period.
4.3 Records of processing
The data protection officer is required to keep a record of all
processing activities, including the retention period of each category.

5. Responsibilities
Each department head must review the records of the department once a
year. Records whose retention period has expired shall be destroyed
securely, and the destruction must be documented.
Questions about this policy are answered by the compliance team.""",
]


def write_sample_pdf(path: str | Path = SAMPLE_PDF) -> Path:
    """Write the demo's two-page records policy PDF to ``path`` and return the path."""
    target = Path(path)
    target.write_bytes(make_pdf(SAMPLE_PAGES))
    return target
