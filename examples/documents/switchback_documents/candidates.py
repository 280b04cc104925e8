"""Requirement candidates: sentences of document chunks that read like obligations.

Contract:
- Pure and deterministic: ``find_candidates(chunks)`` takes ``(chunk_id, text)`` pairs and
  returns ``Candidate``s in chunk order, then text order; no I/O, no randomness.
- Invariant: ``text[c.start:c.end] == c.sentence`` for the chunk's text. Sentences are
  split at blank lines, list items, table rows and headings, then at sentence ends that
  are not abbreviations ("z. B.", "Art.", "e.g."), ordinals ("31. Dezember") or followed
  by a lowercase word. Markdown '#' lines and plain headings ("2.1 Erasure", ALL CAPS,
  "§ 147 ...", short unpunctuated lines) are never candidates.
- A sentence is a candidate when it holds obligation language: EN must, shall, is/are
  required (to), is obliged/obligated to, has/have to, needs to, is to be <done>, may
  not/only, is prohibited; DE muss/müssen, ist/sind verpflichtet, verpflichtet sich,
  ist/sind/hat/haben ... zu <Verb> (also "aufzubewahren"), darf/dürfen nicht/nur,
  ist unzulässig/untersagt, ist ... erforderlich. Not counted: questions, "must-have" /
  "Muss-Kriterien", quoted terms ('"must" means ...'), negations ("is not required",
  "muss nicht", "do not have to"), "required reading", "has to do with", epistemic
  "must have failed", "ist ... zu verstehen/erwarten", infinitive clauses after a comma
  ("hat versucht, ... zu löschen"), and terms inside a whether/ob clause.
- Indicators are GoBD or GDPR topic words (labels such as "Aufbewahrung" or "personal
  data"), each with a weight; the regime guess is the side with the larger weight, the
  sentence's counted twice plus the whole chunk's (its context), "unknown" on a tie.
- ``score`` in [0, 1]: 0.5 for obligation language, more for a second term and for
  indicators, less for very short or very long sentences.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

_I = re.IGNORECASE


@dataclass(frozen=True)
class Candidate:
    chunk_id: str
    start: int
    end: int
    sentence: str
    language: str  # "en" | "de"
    obligation_terms: tuple[str, ...]
    indicators: tuple[str, ...]
    regime: str  # "GoBD" | "GDPR" | "unknown"
    score: float

    def to_dict(self) -> dict:
        d = asdict(self)
        d["obligation_terms"], d["indicators"] = list(self.obligation_terms), list(self.indicators)
        return d


# ---------------------------------------------------------------- sentences

_ABBREVIATIONS = {"art", "abs", "nr", "vgl", "bzw", "ggf", "etc", "ca", "dr", "mr", "ms", "no",
                  "para", "sec", "ff", "inkl", "usw", "gem", "lit", "buchst", "st", "vs", "cf",
                  "approx", "ziff", "bspw", "evtl", "sog", "zzgl", "max", "min", "fig", "s"}
_MONTHS = re.compile(r"(januar|februar|märz|april|mai|juni|juli|august|september|oktober|"
                     r"november|dezember|jan|feb|mär|apr|jun|jul|aug|sep|okt|nov|dez)\b", _I)
_SENTENCE_END = re.compile(r"[.!?…][\"'”’»)\]]*\s+")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*•–]|\d{1,3}[.)]|[a-z][.)]|\([a-z0-9]{1,3}\))[ \t]+")
_MD_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]")
_PLAIN_HEADING = re.compile(r"(§{1,2}|Art\.|Artikel|Article|Chapter|Kapitel|Section|Abschnitt)"
                            r"\s*\d|\d{1,2}(\.\d{1,2})*\.?\s+\S")
_TERMINAL = ".!?;:,…\"'”’»)"


def _is_heading_line(line: str, prev: str, nxt: str) -> bool:
    s = line.strip()
    if _MD_HEADING.match(line):
        return True
    if not s or s[-1] in _TERMINAL or len(s) > 80 or nxt[:1].islower():
        return False
    letters = [c for c in s if c.isalpha()]
    if len(letters) >= 4 and not any(c.islower() for c in letters):
        return True  # ALL CAPS title
    if _PLAIN_HEADING.match(s):
        return len(s.split()) <= 10
    # a short unpunctuated line standing alone (not a list item): a title
    return not prev and not nxt and len(s) <= 60 and not _LIST_ITEM.match(line)


def _blocks(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_heading) of paragraphs, list items, table rows and headings."""
    lines, pos = [], 0
    for line in text.split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    out: list[list] = []
    open_block = False  # the previous line belongs to a block that may continue
    for i, (start, line) in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            open_block = False
            continue
        prev = lines[i - 1][1].strip() if i else ""
        nxt = lines[i + 1][1].strip() if i + 1 < len(lines) else ""
        heading = _is_heading_line(line, prev, nxt)
        item = None if heading else _LIST_ITEM.match(line)
        if open_block and not heading and not item and not stripped.startswith("|"):
            out[-1][1] = start + len(line)
        else:
            out.append([start + (item.end() if item else 0), start + len(line), heading])
        open_block = not heading and not stripped.startswith("|")
    return [(a, z, h) for a, z, h in out]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    inner = text[start:end]
    start += len(inner) - len(inner.lstrip())
    return start, start + len(text[start:end].rstrip())


def split_sentences(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_heading) of every sentence; spans are trimmed and never empty."""
    out = []
    for b_start, b_end, heading in _blocks(text):
        cuts = [b_start]
        if not heading:
            for m in _SENTENCE_END.finditer(text, b_start, b_end):
                words = text[max(b_start, m.start() - 30):m.start()].split()
                word = words[-1].rsplit(".", 1)[-1].lower().strip("(\"'„") if words else ""
                after = text[m.end():b_end]
                if text[m.start()] == "." and (
                        word in _ABBREVIATIONS or len(word) == 1
                        or (word.isdigit() and (_MONTHS.match(after) or len(word) <= 2))):
                    continue
                if after[:1].islower():
                    continue
                cuts.append(m.end())
        cuts.append(b_end)
        for a, z in zip(cuts, cuts[1:], strict=False):
            s, e = _trim(text, a, z)
            if s < e:
                out.append((s, e, heading))
    return out


# ---------------------------------------------------------------- obligation language

_Q = "\"'„“”‚‘’»«"
_EN_TERMS: list[tuple[str, re.Pattern]] = [
    ("must", re.compile(r"\bmust\b(?!-)", _I)),
    ("shall", re.compile(r"\bshall\b(?!-)", _I)),
    ("is required", re.compile(r"\b(?:is|are|be|being|remains?)\s+(?:(?:also|legally|"
                               r"therefore|hereby|always|generally|not)\s+)*required\b"
                               r"(?!\s+(?:reading|viewing|listening))", _I)),
    ("is obliged to", re.compile(r"\b(?:is|are|be|remains?)\s+(?:(?:also|legally|not|"
                                 r"contractually)\s+)*(?:obliged|obligated)\s+to\b", _I)),
    ("has to", re.compile(r"\b(?:has|have)\s+to\b(?!\s+do\s+with)", _I)),
    ("needs to", re.compile(r"\bneeds?\s+to\b", _I)),
    ("is to be", re.compile(r"\b(?:is|are)\s+to\s+be\s+\w+(?:ed|en|wn|t)\b", _I)),
    ("may not/only", re.compile(r"\bmay\s+(?:not|only|never)\b", _I)),
    ("is prohibited", re.compile(r"\b(?:is|are)\s+(?:strictly\s+)?(?:prohibited|forbidden|not\s+"
                                 r"permitted|not\s+allowed)\b", _I)),
]
_DE_TERMS: list[tuple[str, re.Pattern]] = [
    ("muss", re.compile(r"\b(?:muss|müssen|musst|müsst)\b(?!-)", _I)),
    ("ist verpflichtet", re.compile(r"\b(?:ist|sind|bleibt|bleiben)\s+(?:\S+\s+){0,6}?"
                                    r"verpflichtet\b", _I)),
    ("verpflichtet sich", re.compile(r"\bverpflichte[nt]?\s+sich\b", _I)),
    ("darf nicht/nur", re.compile(r"\b(?:darf|dürfen)\b", _I)),
    ("ist unzulässig", re.compile(r"\b(?:ist|sind)\s+(?:\S+\s+){0,4}?(?:unzulässig|untersagt|"
                                  r"verboten|nicht\s+zulässig|nicht\s+gestattet|nicht\s+erlaubt|"
                                  r"nur\s+(?:dann\s+)?zulässig)\b", _I)),
    ("ist erforderlich", re.compile(r"\b(?:ist|sind|wird|werden)\s+(?:\S+\s+){0,6}?(?:"
                                    r"erforderlich|vorgeschrieben|Pflicht)\b", _I)),
]
_ZU_AUX = re.compile(r"\b(ist|sind|hat|haben)\b", _I)
_ZU_INF = re.compile(r"\b(zu\s+[a-zäöüß]+(?:en|ern|eln)|[a-zäöüß]{2,}zu[a-zäöüß]{3,}(?:en|ern|eln))"
                     r"(?=\s*(?:[,.;:!?)]|$|\s(?:und|oder|sowie|bzw\.?|wie|als)\s))")
_ZU_NOT_DUTY = re.compile(r"\b(?:verstehen|sehen|erkennen|finden|erwarten|vermuten|befürchten|"
                          r"hoffen|tun|lesen)$", _I)
_ZU_NOT_MID = re.compile(r"^\s*es\b|(?<!wie\s)\bmöglich\b|\b(?:schwierig|leicht|sinnvoll|ratsam|"
                         r"empfehlenswert|geplant|vorgesehen|beabsichtigt|üblich|Möglichkeit|"
                         r"Recht|Gelegenheit|Ziel|Absicht|nichts|Schwierigkeiten|"
                         r"Interesse|Lust)\b", _I)
_RESTRICT = re.compile(r"\b(?:nicht|nur|kein\w*|keinesfalls|niemals|nie|ausschließlich|"
                       r"lediglich)\b", _I)
_NEGATED = re.compile(r"(?:\bnot|n't|\bno|\bnicht|\bkein\w*)\s+(?:\S+\s+){0,2}$", _I)
_CLAUSE = re.compile(r"[,;:()]|\s[–-]\s")
_WHETHER = re.compile(r"\b(?:whether|ob)\b", _I)


def _clause(sentence: str, start: int, end: int) -> tuple[str, str]:
    """The text of the clause before ``start`` and after ``end``."""
    before = sentence[:start]
    cuts = [m.end() for m in _CLAUSE.finditer(before)]
    after = sentence[end:]
    m = _CLAUSE.search(after)
    return before[cuts[-1] if cuts else 0:], after[:m.start() if m else len(after)]


def _term_ok(name: str, s: str, m: re.Match) -> bool:
    before, after = _clause(s, m.start(), m.end())
    if _WHETHER.search(before) or (m.start() > 0 and s[m.start() - 1] in _Q) or (
            m.end() < len(s) and s[m.end()] in _Q):
        return False
    word = m.group(0).lower()
    if name == "must":
        if re.match(r"\s+have\s+(?:been\s+)?\w+(?:ed|en|wn)\b", after, _I) or re.search(
                r"\ba\s+$", before, _I):
            return False  # "must have failed" (epistemic), "a must"
    elif name == "muss":
        if re.match(r"\s+nicht\b(?!\s+nur)", after, _I) or re.search(
                r"\b(?:worden|gewesen)\s+sein\b", after, _I):
            return False
    elif name == "darf nicht/nur":
        return bool(_RESTRICT.search(before) or _RESTRICT.search(after))
    elif name in ("has to", "needs to"):
        if re.search(r"(?:\bnot|n't|\bno)\s+$", before, _I):
            return False
    elif name in ("is required", "is obliged to", "ist verpflichtet", "ist erforderlich"):
        if re.search(r"\b(?:not|nicht|kein\w*)\b", word) or (
                name in ("is required", "ist erforderlich") and _NEGATED.search(before)):
            return False
    return True


def _zu_terms(s: str) -> list[str]:
    """'sind ... aufzubewahren', 'hat ... zu sorgen': German duty with a zu-infinitive."""
    found = []
    for aux in _ZU_AUX.finditer(s):
        stop = re.search(r"[;:!?]", s[aux.end():])  # one sentence: "gem." is no end
        region = s[aux.end():aux.end() + stop.start() if stop else len(s)]
        for inf in _ZU_INF.finditer(region):
            mid, verb = region[:inf.start()], inf.group(1)
            if _ZU_NOT_DUTY.search(verb) or _ZU_NOT_MID.search(mid):
                continue
            if "," in mid and not re.search(r"\b(?:und|oder|sowie)\b", mid.rsplit(",", 1)[1]):
                continue
            if _WHETHER.search(_clause(s, aux.start(), aux.end())[0]):
                continue
            found.append(f"{aux.group(1).lower()} ... {' '.join(verb.split())}")
            break
    return found


def obligation_terms(sentence: str) -> list[str]:
    """The obligation terms of one sentence, in a fixed order; [] when there are none."""
    s = " ".join(sentence.split())
    if s.endswith("?"):
        return []
    terms = [name for name, rx in _EN_TERMS + _DE_TERMS
             if any(_term_ok(name, s, m) for m in rx.finditer(s))]
    for t in _zu_terms(s):
        if t not in terms:
            terms.append(t)
    return terms


# ---------------------------------------------------------------- indicators and regime

_INDICATORS: list[tuple[str, str, int, re.Pattern]] = [(label, regime, weight, re.compile(rx, _I))
                                                       for label, regime, weight, rx in [
    ("Aufbewahrung", "GoBD", 1, r"\baufbewahr|\baufzubewahr"),
    ("Nachvollziehbarkeit", "GoBD", 1, r"\bnachvollzieh|\bnachprüfbar|\btraceab|\baudit trail"),
    ("Unveränderbarkeit", "GoBD", 2, r"\bunveränderbar|\bunalterab|\bimmutab|\bfestschreib|"
     r"\bfestgeschrieben|\bnicht (?:so )?verändert|\bnot be (?:altered|changed)"),
    ("Belegfunktion", "GoBD", 2, r"\bbeleg(?!en\b)|\bvouchers?\b|\breceipts\b|\bsource documents?"),
    ("Verfahrensdokumentation", "GoBD", 2, r"\bverfahrensdokumentation|\bprocedural documentation"),
    ("Buchführung", "GoBD", 2, r"\bbuchführung|\bbuchung|\bbuchhalt|\bhauptbuch|\bbookkeeping|"
     r"\bbookings?\b|\bjournal entr|\bledger|\baccounting|\bposted entr|\breversal entr"),
    ("Steuer", "GoBD", 2, r"\bsteuer|\bfinanzbehörde|\bfinanzverwaltung|\baußenprüfung|"
     r"\bbetriebsprüfung|\babgabenordnung|§\s*147|\btax"),
    ("Handelsunterlagen", "GoBD", 2, r"\brechnung|\binvoice|\bhandelsbrief|\bjahresabschl|"
     r"\binventar|\bkassen|\bcash (?:receipts|payments|register)|\bfinancial statements|"
     r"\bcommercial letters|\bbusiness letters|\bkontoausz|\blohnunterlagen|\bpayroll"),
    ("Ordnungsmäßigkeit", "GoBD", 2, r"\bgobd\b|\bordnungsmäßig|\bordnungsvorschrift|\bhgb\b"),
    ("Datenzugriff", "GoBD", 2, r"\bdatenzugriff|\bmaschinell auswertbar|\bmachine-evaluable"),
    ("Archivierung", "GoBD", 1, r"\bscan|\bdigitalisat|\barchiv"),
    ("internes Kontrollsystem", "GoBD", 1, r"\binternes? kontrollsystem|\binternal control"),
    ("personal data", "GDPR", 2, r"\bpersonal data|\bpersonenbezogen"),
    ("consent", "GDPR", 2, r"\bconsent|\beinwillig|\bwiderruf"),
    ("erasure", "GDPR", 1, r"\berasure|\berase|\bdelet|\blösch|\bgelöscht"),
    ("retention", "GDPR", 1, r"\bretention|\bretain|\bspeicherbegrenzung|\bstorage limitation|"
     r"\bspeicherdauer"),
    ("data subject", "GDPR", 2, r"\bdata subjects?\b|\bbetroffene"),
    ("controller", "GDPR", 2, r"\bcontrollers?\b|\bverantwortliche|\bprocessors?\b|"
     r"\bauftragsverarbeit"),
    ("processing", "GDPR", 1, r"\bprocessing\b|\bprocesse[sd]\b|\bverarbeit"),
    ("data protection", "GDPR", 2, r"\bgdpr\b|\bdsgvo\b|\bdata protection\b|\bdatenschutz|"
     r"\bprivacy\b|\bsupervisory authority|\baufsichtsbehörde"),
    ("data breach", "GDPR", 2, r"\bdata breach|\bdatenpanne|\bverletzung des schutzes"),
    ("impact assessment", "GDPR", 2, r"\bimpact assessment|\bfolgenabschätzung"),
    ("third country", "GDPR", 2, r"\bthird countr|\bdrittl[aä]nd"),
    ("lawful basis", "GDPR", 2, r"\blawful basis|\blegal basis|\brechtsgrundlage|"
     r"\blegitimate interest|\bberechtigte\w* interesse"),
    ("data subject rights", "GDPR", 1, r"\bright of access|\bauskunft|\brectification|"
     r"\bberichtigung|\bportability|\bwiderspruch"),
    ("records of processing", "GDPR", 2, r"\brecords? of processing|\bverarbeitungstätigkeit"),
    ("special categories", "GDPR", 2, r"\bspecial categories|\bhealth data|\bgesundheitsdaten"),
    ("purpose limitation", "GDPR", 2, r"\bpurpose limitation|\bzweckbindung|\bdata minimi|"
     r"\bdatenminimierung"),
    ("direct marketing", "GDPR", 1, r"\bcookies?\b|\bnewsletter|\bmarketing e-?mails?"),
    ("monitoring", "GDPR", 1, r"\bvideo|\bmonitoring\b|\büberwachungs"),
]]


def indicators(sentence: str) -> tuple[list[str], dict[str, int]]:
    """Indicator labels found, and the summed weight per regime."""
    found, weight = [], {"GoBD": 0, "GDPR": 0}
    for label, regime, w, rx in _INDICATORS:
        if rx.search(sentence):
            found.append(label)
            weight[regime] += w
    return found, weight


def _regime(weight: dict[str, int]) -> str:
    if weight["GoBD"] == weight["GDPR"]:
        return "unknown"
    return "GoBD" if weight["GoBD"] > weight["GDPR"] else "GDPR"


_DE_WORDS = {"der", "die", "das", "und", "ist", "sind", "nicht", "mit", "von", "zu", "den", "dem",
             "des", "ein", "eine", "einer", "für", "auf", "werden", "wird", "muss", "müssen",
             "dass", "im", "bei", "oder", "auch", "nach", "sie", "es", "wenn", "darf", "dürfen"}
_EN_WORDS = {"the", "and", "is", "are", "not", "with", "of", "to", "a", "an", "for", "on", "be",
             "must", "shall", "that", "by", "or", "it", "they", "their", "which", "when", "may",
             "has", "have", "this", "from", "at", "as", "all"}


def language(sentence: str) -> str:
    words = re.findall(r"[a-zäöüß]+", sentence.lower())
    de = sum(w in _DE_WORDS for w in words) + sum(ch in "äöüß" for ch in sentence.lower())
    en = sum(w in _EN_WORDS for w in words)
    return "de" if de > en else "en"


def find_candidates(chunks: list[tuple[str, str]]) -> list[Candidate]:
    """Obligation sentences of every chunk (see the module docstring)."""
    out: list[Candidate] = []
    for chunk_id, text in chunks:
        chunk_weight = indicators(text)[1]
        for start, end, heading in split_sentences(text):
            sentence = text[start:end]
            terms = [] if heading else obligation_terms(sentence)
            if not terms:
                continue
            found, weight = indicators(sentence)
            regime = _regime({k: 2 * weight[k] + chunk_weight[k] for k in weight})
            score = 0.5 + 0.1 * (len(terms) > 1) + min(0.4, 0.1 * sum(weight.values()))
            if len(sentence) < 30 or len(sentence) > 600:
                score -= 0.2
            out.append(Candidate(chunk_id, start, end, sentence, language(sentence),
                                 tuple(terms), tuple(found), regime,
                                 round(max(0.0, min(1.0, score)), 2)))
    return out
