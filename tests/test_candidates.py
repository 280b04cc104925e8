"""Requirement candidates: sentence spans, obligation language in German and English, the
false positives it must avoid, and precision/recall on the labelled sentence set."""

from __future__ import annotations

from pathlib import Path

import pytest

from switchback.bench.candidates import load, report
from switchback_documents.candidates import (
    find_candidates,
    language,
    obligation_terms,
    split_sentences,
)
from switchback_documents.extract import chunk_text, extract_text

SAMPLES = Path(__file__).resolve().parents[1] / "configs" / "creator" / "documents"

MIXED_CHUNK = """## Aufbewahrung

Bücher sind gem. § 147 Abs. 1 AO zehn Jahre aufzubewahren, z. B. Journale und Konten.
Die Frist beginnt am 31. Dezember des Jahres. Rechnungen müssen acht Jahre lang
aufbewahrt werden.

- Belege sind vor Verlust zu schützen.
- Muss-Kriterien stehen in Anlage B.

3. Personal data
The controller must erase personal data without undue delay, e.g. after consent is
withdrawn. Shall we review this? Retention periods shall be reviewed regularly."""


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e, _ in split_sentences(text)]


def test_offsets_point_at_the_sentence_in_every_chunk() -> None:
    chunks = []
    for name in ("gobd_retention.md", "gdpr_erasure.txt", "records_policy.pdf"):
        doc = extract_text(name, (SAMPLES / name).read_bytes())
        chunks += [(c.id + name, c.text) for c in chunk_text(name, doc, max_chars=600)]
    chunks.append(("mixed", MIXED_CHUNK))
    found = find_candidates(chunks)
    texts = dict(chunks)
    assert len(found) > 40
    for c in found:
        assert texts[c.chunk_id][c.start:c.end] == c.sentence
        assert c.sentence == c.sentence.strip() and not c.sentence.startswith("#")
        assert 0 <= c.score <= 1 and c.obligation_terms
    assert {c.regime for c in found} >= {"GoBD", "GDPR"}
    assert {c.language for c in found} == {"de", "en"}
    assert find_candidates(chunks) == found  # deterministic


def test_sentence_splitting_respects_abbreviations_dates_and_structure() -> None:
    got = sentences(MIXED_CHUNK)
    assert got[:4] == [
        "## Aufbewahrung",
        "Bücher sind gem. § 147 Abs. 1 AO zehn Jahre aufzubewahren, z. B. Journale und Konten.",
        "Die Frist beginnt am 31. Dezember des Jahres.",
        "Rechnungen müssen acht Jahre lang\naufbewahrt werden.",
    ]
    assert "Belege sind vor Verlust zu schützen." in got  # list marker not in the span
    assert "3. Personal data" in got
    assert ("The controller must erase personal data without undue delay, e.g. after consent "
            "is\nwithdrawn.") in got
    headings = [MIXED_CHUNK[s:e] for s, e, h in split_sentences(MIXED_CHUNK) if h]
    assert headings == ["## Aufbewahrung", "3. Personal data"]


def test_mixed_chunk_candidates() -> None:
    found = find_candidates([("c1", MIXED_CHUNK)])
    by_text = {c.sentence.split()[0]: c for c in found}
    assert [c.sentence.split()[0] for c in found] == [
        "Bücher", "Rechnungen", "Belege", "The", "Retention"]
    assert by_text["Bücher"].obligation_terms == ("sind ... aufzubewahren",)
    assert by_text["Bücher"].language == "de" and by_text["Bücher"].regime == "GoBD"
    assert "Aufbewahrung" in by_text["Bücher"].indicators
    the = by_text["The"]
    assert the.obligation_terms == ("must",) and the.language == "en"
    assert the.regime == "GDPR" and {"personal data", "consent", "controller"} <= set(
        the.indicators)
    assert by_text["Retention"].obligation_terms == ("shall",)


@pytest.mark.parametrize(("sentence", "terms", "lang"), [
    ("Each controller is required to maintain a record of processing activities.",
     ["is required"], "en"),
    ("The processor is obliged to delete the data after the end of the contract.",
     ["is obliged to"], "en"),
    ("Employees have to report data breaches without delay.", ["has to"], "en"),
    ("Cash receipts are to be recorded daily.", ["is to be"], "en"),
    ("Personal data may only be processed on a lawful basis.", ["may not/only"], "en"),
    ("Journal entries must not be overwritten and shall be reversed instead.",
     ["must", "shall"], "en"),
    ("Der Verantwortliche ist verpflichtet, eine Kopie bereitzustellen.",
     ["ist verpflichtet"], "de"),
    ("Der Steuerpflichtige hat dafür zu sorgen, dass die Daten lesbar bleiben.",
     ["hat ... zu sorgen"], "de"),
    ("Auftragsverarbeiter haben den Verantwortlichen zu unterstützen.",
     ["haben ... zu unterstützen"], "de"),
    ("Geschäftsvorfälle sind vollständig, richtig und geordnet zu erfassen.",
     ["sind ... zu erfassen"], "de"),
    ("Mitarbeitende dürfen Kundendaten nicht auf privaten Geräten speichern.",
     ["darf nicht/nur"], "de"),
    ("Eine Weitergabe an Dritte ohne Rechtsgrundlage ist unzulässig.", ["ist unzulässig"], "de"),
    ("Für Newsletter ist eine ausdrückliche Einwilligung erforderlich.",
     ["ist erforderlich"], "de"),
    ("Der Auftragnehmer verpflichtet sich, die Daten nach Vertragsende zu löschen.",
     ["verpflichtet sich"], "de"),
])
def test_obligation_language(sentence: str, terms: list[str], lang: str) -> None:
    assert obligation_terms(sentence) == terms
    assert language(sentence) == lang
    [c] = find_candidates([("c", sentence)])
    assert (c.start, c.end, c.obligation_terms) == (0, len(sentence), tuple(terms))


@pytest.mark.parametrize("text", [
    "The must-have features for the new archive are listed in Appendix B.",
    "Must-have and nice-to-have requirements are tracked separately.",
    "Die Muss-Kriterien für das Archivsystem sind in Anlage B aufgeführt.",
    "Shall we schedule the audit for the second quarter?",
    "Must the controller notify the authority in every case?",
    "Müssen wir die Kontoauszüge wirklich zehn Jahre aufbewahren?",
    "The GDPR handbook is required reading for the whole team.",
    "The controller is not required to inform recipients in that case.",
    "Small businesses do not have to appoint a data protection officer.",
    "Kleinunternehmer müssen nicht in jedem Fall einen Datenschutzbeauftragten benennen.",
    "Der Verantwortliche ist nicht verpflichtet, ein bestimmtes Dateiformat zu verwenden.",
    "Für interne Testsysteme ist keine Verschlüsselung erforderlich.",
    "Most of the questions we receive have to do with old invoices.",
    'The term "must" is used in this document to indicate an obligation.',
    "Der Begriff „muss“ kennzeichnet eine verbindliche Vorgabe.",
    "The team asked whether scanned receipts must be kept as well.",
    "Das Team fragte, ob gescannte Belege zusätzlich aufbewahrt werden müssen.",
    "The migration must have failed because the log shows no entries.",
    "Der Begriff der Verarbeitung ist weit zu verstehen.",
    "Es ist zu erwarten, dass die Anforderungen steigen.",
    "Es ist möglich, Papierbelege nach dem Scannen zu vernichten.",
    "Die Firma hat im letzten Quartal versucht, alle Altdaten zu löschen.",
    "Der Betroffene hat die Möglichkeit, seine Einwilligung zu widerrufen.",
    "Der Verantwortliche darf ein angemessenes Entgelt verlangen.",
    "Im letzten Jahr mussten wir alle Buchungsdaten übergeben.",
    "Employees should lock their screens.",
    "The data subject may request a copy of the data.",
    "## What controllers must document",
    "# Was Unternehmen aufbewahren müssen",
    "RECORDS THAT MUST BE KEPT",
    "2.1 Invoices must be kept",
])
def test_false_positives_are_avoided(text: str) -> None:
    assert find_candidates([("c", text)]) == []


def test_heading_followed_by_text_on_the_next_line() -> None:
    text = "1. Lawful basis\nPersonal data must only be processed on a lawful basis."
    [c] = find_candidates([("c", text)])
    assert c.sentence == "Personal data must only be processed on a lawful basis."
    assert text[c.start:c.end] == c.sentence


def test_precision_and_recall_on_the_labelled_set() -> None:
    rows = load()
    assert len(rows) >= 160
    langs = {r["lang"] for r in rows}
    assert langs == {"en", "de"}
    share_de = sum(r["lang"] == "de" for r in rows) / len(rows)
    assert 0.4 <= share_de <= 0.6
    assert all(isinstance(r["requirement"], bool) and r["text"].strip() for r in rows)
    scores = report(rows)
    assert scores["all"].n == len(rows)
    assert scores["en"].n + scores["de"].n == len(rows)
    assert scores["dev"].n + scores["holdout"].n == len(rows)
    for group in ("all", "en", "de", "holdout"):
        s = scores[group]
        assert s.tp + s.fn == sum(r["requirement"] for r in rows
                                  if group == "all" or group in (r["lang"], r.get("split")))
        assert s.precision >= 0.8 and s.recall >= 0.8, (group, s)
