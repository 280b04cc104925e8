"""Creator domain tools: requirement candidates, citations, requirements.

Every answer is short (counts, ids, paths); the data is in the workspace:

- `identify_requirement_candidates(path="chunks")` reads `<path>/manifest.json` and the
  chunk files, runs `activities.candidates.find_candidates` and writes
  `candidates/candidates.json` (`{"candidates": [...]}`: chunk id, span, sentence, terms,
  indicators, regime guess, score, source). Answers with counts per regime.
- `cite_document(chunk_id, quote)` finds the quote in `chunks/<chunk_id>.md` (whitespace
  runs compared as one space) and appends `{id: CIT-NNN, chunk_id, quote (the chunk's exact
  text), start, end, source, page, heading_path, source_start, source_end}` to
  `citations/citations.json`. The same passage again returns the same id. Errors:
  `unknown_chunk`, `quote_not_found` (naming the chunk).
- `write_requirement(statement, regime, citation_ids, rationale="", id=None)` allocates
  `req_NNN` (or updates `id`; the same content again keeps its id), validates
  `output/requirements.json` rebuilt from every `requirements/*/final.json` against
  `configs/creator/requirement.schema.json` and only then writes
  `requirements/req_NNN/{draft.md,citations.json,final.json}` and the output. Errors:
  `unknown_citation`, `unknown_requirement`, `invalid_requirement` (naming the field).
Writes are deterministic (no clocks), so a retried call leaves the same files. Written with
the public tool API (`switchback.tool`) and registered through the entry point group
`switchback.tools` (pyproject.toml), like any tool package; `web_search` is in web.py.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from functools import cache

import jsonschema
from pydantic import BaseModel, Field

from switchback import Files, ToolContext, ToolError, ToolResult, tool
from switchback.activities.config_roots import config_path
from switchback_documents.candidates import find_candidates

SCHEMA = "creator/requirement.schema.json"  # in the worker's configs folder (configs_dir())
CANDIDATES, CITATIONS, OUTPUT = ("candidates/candidates.json", "citations/citations.json",
                                 "output/requirements.json")
REGIMES = {"gobd": "GoBD", "gdpr": "GDPR", "dsgvo": "GDPR"}
_FINAL = re.compile(r"requirements/(req_\d{3,})/final\.json")
_CHUNK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_QUOTES = "\"'„“”‚‘’»«` "


class IdentifyCandidatesArgs(BaseModel):
    path: str = Field("chunks", description="Folder holding manifest.json and the chunk files")


class CiteDocumentArgs(BaseModel):
    chunk_id: str = Field(description="Chunk id from chunks/manifest.json, e.g. 'chunk_003'")
    quote: str = Field(min_length=10, max_length=3000,
                       description="Passage copied verbatim from the chunk (line breaks may "
                       "differ); the sentence that carries the obligation")


class WriteRequirementArgs(BaseModel):
    statement: str = Field(description="The requirement as one self-contained sentence")
    regime: str = Field(description="'GoBD' or 'GDPR'")
    citation_ids: list[str] = Field(description="Ids from cite_document, e.g. ['CIT-001']")
    rationale: str = Field("", description="Why it is a requirement; how the quote was read")
    id: str | None = Field(None, description="'req_NNN' to update that requirement; omit for "
                           "a new one")


# ---------------------------------------------------------------- workspace helpers

async def _read_all(files: Files, paths: list[str]) -> list[str | None]:
    gate = asyncio.Semaphore(16)

    async def one(path: str) -> str | None:
        async with gate:
            return await files.read_optional(path)
    return list(await asyncio.gather(*(one(p) for p in paths)))


async def _json_list(files: Files, path: str, key: str) -> list[dict] | None:
    raw = await files.read_optional(path)
    if raw is None:
        return None
    try:
        items = json.loads(raw)[key]
        if isinstance(items, list) and all(isinstance(i, dict) for i in items):
            return items
    except (ValueError, KeyError, TypeError):
        pass
    raise ToolError("invalid_file", f"'{path}' is not a JSON object with a '{key}' list of "
                    "objects; fix or delete it")


async def _write_json(files: Files, path: str, doc: object) -> str:
    return await files.write_text(path, json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


def _num(ident: str) -> int:
    return int(re.split(r"[_-]", ident)[-1])


# ---------------------------------------------------------------- candidates

@tool
async def identify_requirement_candidates(ctx: ToolContext,
                                          a: IdentifyCandidatesArgs) -> ToolResult:
    """Scan the chunks for sentences with obligation language (must, shall, muss, ist
    verpflichtet, sind ... aufzubewahren) and GoBD/GDPR indicators. Writes
    candidates/candidates.json (chunk id, character span, terms, regime guess, score);
    answers with counts per regime."""
    files = ctx.files
    folder = a.path.strip().strip("/") or "chunks"
    manifest = await _json_list(files, f"{folder}/manifest.json", "chunks")
    if manifest is None:
        raise ToolError("no_chunks", f"'{folder}/manifest.json' does not exist; run "
                        "chunk_document on the documents first")
    entries = [e for e in manifest if isinstance(e.get("id"), str)]
    texts = await _read_all(files, [f"{folder}/{e['id']}.md" for e in entries])
    missing = [e["id"] for e, t in zip(entries, texts, strict=True) if t is None]
    meta = {e["id"]: e for e in entries}
    found = await asyncio.to_thread(find_candidates, [
        (e["id"], t) for e, t in zip(entries, texts, strict=True) if t is not None])
    records = [{"id": f"CAND-{n:03d}", **c.to_dict(), "source": meta[c.chunk_id].get("source"),
                "page": meta[c.chunk_id].get("page"),
                "heading_path": meta[c.chunk_id].get("heading_path", [])}
               for n, c in enumerate(found, 1)]
    by_regime = {r: n for r, n in Counter(c.regime for c in found).most_common()}
    doc = {"chunks_scanned": len(entries) - len(missing), "by_regime": by_regime,
           "candidates": records}
    path = await _write_json(files, CANDIDATES, doc)
    counts = ", ".join(f"{r} {n}" for r, n in by_regime.items()) or "none"
    text = (f"Found {len(found)} candidates in {len({c.chunk_id for c in found})} of "
            f"{len(entries) - len(missing)} chunks ({counts}) -> {path}.")
    if missing:
        text += f" Missing chunk files (skipped): {', '.join(missing[:10])}."
    return ToolResult(text, [path])


# ---------------------------------------------------------------- citations

def _collapse(text: str) -> tuple[str, list[int]]:
    """`text` with whitespace runs as one space, and each kept character's offset."""
    out, index = [], []
    for m in re.finditer(r"\s+|\S+", text):
        if m.group()[0].isspace():
            out.append(" ")
            index.append(m.start())
        else:
            out.append(m.group())
            index.extend(range(m.start(), m.end()))
    return "".join(out), index


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """Exact (start, end) of `quote` in `text`, whitespace runs compared as one space."""
    norm, index = _collapse(text)
    q = " ".join(quote.split())
    for cand in dict.fromkeys((q, q.strip(_QUOTES).rstrip(".…").strip(_QUOTES))):
        i = norm.find(cand) if cand else -1
        if i >= 0:
            return index[i], index[i + len(cand) - 1] + 1
    return None


def _miss_hint(text: str, quote: str) -> str:
    norm, q = _collapse(text)[0], " ".join(quote.split())
    if q.lower() in norm.lower():
        return "it occurs with different capitalisation; copy it exactly"
    lo, hi = 0, len(q)  # longest prefix of the quote that occurs in the chunk
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if q[:mid] in norm else (lo, mid - 1)
    if lo >= 15:
        return (f"its first {lo} of {len(q)} characters match; it differs from "
                f"'{q[lo:lo + 40]}' on")
    return "read the chunk and copy the passage exactly"


@tool
async def cite_document(ctx: ToolContext, a: CiteDocumentArgs) -> ToolResult:
    """Record a citation: a quote copied verbatim from chunks/<chunk_id>.md. Refused if the
    quote is not in the chunk. Answers with the citation id (CIT-NNN) and its character
    span; the same passage keeps its id."""
    files = ctx.files
    chunk_id = a.chunk_id.strip().removeprefix("chunks/").removesuffix(".md")
    text = (await files.read_optional(f"chunks/{chunk_id}.md")
            if _CHUNK_ID.fullmatch(chunk_id) else None)
    manifest = await _json_list(files, "chunks/manifest.json", "chunks") or []
    if text is None:
        ids = [e.get("id") for e in manifest]
        known = f"the manifest lists {ids[0]} .. {ids[-1]}" if ids else "there are no chunks"
        raise ToolError("unknown_chunk", f"there is no chunk '{a.chunk_id}' "
                        f"(chunks/{chunk_id}.md); {known}")
    span = await asyncio.to_thread(locate, text, a.quote)
    if span is None:
        hint = await asyncio.to_thread(_miss_hint, text, a.quote)
        raise ToolError("quote_not_found", f"the quote does not occur in chunk '{chunk_id}' "
                        f"(chunks/{chunk_id}.md): {hint}")
    start, end = span
    citations = await _json_list(files, CITATIONS, "citations") or []
    for c in citations:
        if (c.get("chunk_id"), c.get("start"), c.get("end")) == (chunk_id, start, end):
            return ToolResult(f"Already recorded as {c['id']}: {chunk_id} characters "
                              f"{start}-{end}.")
    meta = next((e for e in manifest if e.get("id") == chunk_id), {})
    base = meta.get("start")
    cid = f"CIT-{max((_num(c['id']) for c in citations), default=0) + 1:03d}"
    citations.append({"id": cid, "chunk_id": chunk_id, "quote": text[start:end],
                      "start": start, "end": end, "source": meta.get("source"),
                      "page": meta.get("page"), "heading_path": meta.get("heading_path", []),
                      "source_start": base + start if isinstance(base, int) else None,
                      "source_end": base + end if isinstance(base, int) else None})
    path = await _write_json(files, CITATIONS, {"citations": citations})
    where = f" ({meta['source']})" if meta.get("source") else ""
    return ToolResult(f"Recorded {cid}: {chunk_id} characters {start}-{end}{where}.", [path])


# ---------------------------------------------------------------- requirements

@cache
def _validator() -> jsonschema.Draft202012Validator:
    text = config_path(SCHEMA).read_text(encoding="utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


def _schema_errors(doc: dict) -> list[tuple[int | None, str]]:
    """(index of the requirement or None, 'field: message') per schema violation."""
    out = []
    for err in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.path))):
        path = list(err.path)
        index = path[1] if len(path) > 1 and path[0] == "requirements" else None
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[2:])
        out.append((index, f"{field.lstrip('.') or 'requirement'}: {err.message}"))
    return out


async def _requirements(files: Files) -> dict[str, dict]:
    paths = sorted((o.key for o in await files.list("requirements") if _FINAL.fullmatch(o.key)),
                   key=lambda p: _num(_FINAL.fullmatch(p).group(1)))  # type: ignore[union-attr]
    out = {}
    for path, raw in zip(paths, await _read_all(files, paths), strict=True):
        try:
            out[_FINAL.fullmatch(path).group(1)] = json.loads(raw or "")  # type: ignore[union-attr]
        except ValueError as e:
            raise ToolError("invalid_requirement", f"'{path}' is not valid JSON ({e}); rewrite "
                            "it with write_requirement(id=...)") from e
    return out


def _draft(r: dict) -> str:
    cites = "\n".join(f"- {c['id']} {c['chunk_id']} [{c['start']}:{c['end']}]"
                      f"{' ' + c['source'] if c.get('source') else ''}: "
                      f"\"{' '.join(c['quote'].split())}\"" for c in r["citations"])
    return (f"# {r['id']} ({r['regime']})\n\n{r['statement']}\n\n## Rationale\n\n"
            f"{r.get('rationale') or '-'}\n\n## Citations\n\n{cites}\n")


@tool
async def write_requirement(ctx: ToolContext, a: WriteRequirementArgs) -> ToolResult:
    """Write one requirement backed by citation ids from cite_document to
    requirements/req_NNN/ and rebuild output/requirements.json, validated against the
    requirement schema. Pass id to update one."""
    files = ctx.files
    known = {c["id"]: c for c in await _json_list(files, CITATIONS, "citations") or []
             if isinstance(c.get("id"), str)}
    ids = [c.strip().upper() for c in a.citation_ids]
    unknown = [c for c in ids if c not in known]
    if unknown:
        raise ToolError("unknown_citation", f"no citation {', '.join(map(repr, unknown))} in "
                        f"{CITATIONS}; record the quote with cite_document first")
    existing = await _requirements(files)
    record = {"id": "", "statement": " ".join(a.statement.split()),
              "regime": REGIMES.get(a.regime.strip().lower(), a.regime.strip()),
              "rationale": a.rationale.strip(),
              "citations": [known[c] for c in dict.fromkeys(ids)]}
    if a.id is not None:
        rest = a.id.strip().lower().replace("-", "_").removeprefix("req_")
        rid = f"req_{int(rest):03d}" if rest.isdigit() else f"req_{rest}"
        if rid not in existing:
            raise ToolError("unknown_requirement", f"there is no requirement '{a.id}' "
                            f"(requirements/{rid}/final.json); omit id to create one")
    else:
        same = [k for k, r in existing.items() if {**r, "id": ""} == record]
        rid = same[0] if same else f"req_{max(map(_num, existing), default=0) + 1:03d}"
    record["id"] = rid
    merged = {**existing, rid: record}
    reqs = [merged[k] for k in sorted(merged, key=_num)]
    doc = {"requirements": reqs}
    errors = _schema_errors(doc)
    if errors:
        rel = f"configs/{SCHEMA}"
        mine = [msg for i, msg in errors if i is not None and reqs[i] is record]
        if mine:
            raise ToolError("invalid_requirement", f"requirement {rid} does not match {rel}: "
                            f"{'; '.join(mine[:3])}. Nothing was written.")
        i, msg = errors[0]
        who = sorted(merged, key=_num)[i] if i is not None else "?"
        raise ToolError("invalid_requirement", f"requirements/{who}/final.json does not "
                        f"match {rel}: {msg}. Rewrite it with write_requirement(id='{who}').")
    folder = f"requirements/{rid}"
    changed = [await files.write_text(f"{folder}/draft.md", _draft(record)),
               await _write_json(files, f"{folder}/citations.json",
                                 {"citations": record["citations"]}),
               await _write_json(files, f"{folder}/final.json", record),
               await _write_json(files, OUTPUT, doc)]
    counts = ", ".join(f"{k} {n}" for k, n in sorted(Counter(r["regime"] for r in reqs).items()))
    verb = "Updated" if rid in existing else "Wrote"
    return ToolResult(f"{verb} {rid} ({record['regime']}, {len(record['citations'])} "
                      f"citations) in {folder}/; {OUTPUT} holds {len(reqs)} requirements "
                      f"({counts}) and matches the schema.", changed)
