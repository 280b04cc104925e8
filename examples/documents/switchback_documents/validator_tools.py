"""Domain tools of the validator job: check requirements against the graph and integrate them.

Tools of the public API (`switchback.tool`), registered through the entry point group
`switchback.tools` (pyproject.toml): execute_cypher_query, get_database_schema,
find_similar_requirements, check_for_duplicates, create_requirement_node,
create_fulfillment_relationship, get_entity_relationships, count_graph_statistics,
record_decision. The graph is `graph_store.graph_store()`.

Writes: the creating tools (create_requirement_node, create_fulfillment_relationship,
record_decision) are the sanctioned writes and need no approval; they are idempotent, so a
retried activity leaves the same graph. A free-form Cypher query that writes (see
`graph_store.classify_cypher`) asks for approval and runs only with `ctx.approved`, else
`write_not_approved`; reads run in read-only transactions, so a write the detection missed
is still refused by the engine. Each graph change of the job is logged in its workspace,
`graph_changes.json` (deduplicated: retries add nothing); `record_decision` writes
`output/decision.json`: the decision, the reason, the job's decisions and that log.

Similarity: TF-IDF cosine over word unigrams and bigrams, after lower-casing, folding
umlauts, dropping EN/DE stop words and light suffix stemming (one EN+DE suffix list, one
suffix per word). Deterministic, no model or download (the stack runs offline), explainable
(shared rare words and phrases weigh most, words every requirement uses little, through
IDF) and cheap for thousands of requirements. It sees words, not meaning: paraphrases in
other words or translations score low, so scores inform the model's decision, not replace it.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections import Counter
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from switchback import Files, ToolContext, ToolError, ToolResult, tool
from switchback_documents.graph_store import GraphQueryError, classify_cypher, graph_store

CHANGES, DECISION = "graph_changes.json", "output/decision.json"
MAX_ROWS = 100


class CypherQueryArgs(BaseModel):
    query: str = Field(min_length=1, description="One Cypher statement; use $name parameters")
    params: dict[str, Any] = Field(default_factory=dict, description="Query parameters")


class NoArgs(BaseModel):
    pass


class SimilarArgs(BaseModel):
    statement: str = Field(min_length=1, description="The requirement text to compare")
    k: int = Field(5, ge=1, le=50, description="How many of the most similar to list")


class DuplicateArgs(BaseModel):
    statement: str = Field(min_length=1, description="The requirement text to check")
    threshold: float = Field(0.8, ge=0, le=1, description="Similarity (0..1) from which an "
                             "existing requirement counts as a likely duplicate")


class RequirementArgs(BaseModel):
    id: str = Field(min_length=1, description="New unique requirement id, e.g. 'GDPR-007'")
    statement: str = Field(min_length=1, description="The requirement, self-contained")
    regime: str = Field(min_length=1, description="Its regulation, e.g. 'GDPR' or 'GoBD'")
    source: str = Field(min_length=1, description="Citation: document, article, section")


class FulfillmentArgs(BaseModel):
    control_id: str = Field(min_length=1, description="Id of an existing Control")
    requirement_id: str = Field(min_length=1, description="Id of an existing Requirement")


class EntityArgs(BaseModel):
    id: str = Field(min_length=1, description="Id of a Requirement, Control or Regulation")


class DecisionArgs(BaseModel):
    requirement_id: str = Field(min_length=1, description="The requirement decided on")
    decision: Literal["accept", "duplicate", "reject"]
    duplicate_of: str | None = Field(None, description="With 'duplicate' only: the id of the "
                                     "existing requirement it duplicates")
    reason: str = Field(min_length=1, description="Why, citing scores or graph facts")


def _needs_approval(a: BaseModel) -> bool:
    return classify_cypher(getattr(a, "query", ""))[0] == "write"


# -- similarity ------------------------------------------------------------------------------
_FOLD = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss"})
_STOP = frozenset(
    "a an and any are as at be been by can could for from has have in into is it its of on or "
    "shall should such that the their them there these they this those to was were which "
    "will with within would must may aber als am auch auf aus bei bis da das dass dem den der "
    "des die durch ein eine einem einen einer eines fur im ist kann konnen mit muss mussen "
    "nach oder sich sie sind so soll sollen sowie uber um und vom von vor werden wird wie zu "
    "zum zur".split())
_SUFFIXES = [("ungen", ""), ("heiten", ""), ("keiten", ""), ("ations", ""), ("ation", ""),
             ("ments", ""), ("ment", ""), ("ings", ""), ("ing", ""), ("ies", "y"), ("ied", "y"),
             ("ung", ""), ("heit", ""), ("keit", ""), ("lich", ""), ("isch", ""), ("ern", ""),
             ("ers", ""), ("ed", ""), ("er", ""), ("es", ""), ("en", ""), ("em", ""), ("ly", ""),
             ("e", ""), ("s", ""), ("n", "")]


def _stem(word: str) -> str:
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[:-len(suffix)] + repl
    return word


def terms(text: str) -> list[str]:
    """Stemmed content words of `text` plus their adjacent pairs ('a b')."""
    words = re.findall(r"[a-z0-9]+", text.lower().translate(_FOLD))
    stems = [_stem(w) for w in words if w not in _STOP]
    return stems + [f"{a} {b}" for a, b in zip(stems, stems[1:], strict=False)]


def rank_similar(statement: str, corpus: list[dict]) -> list[tuple[float, dict]]:
    """(cosine, row) for each row of `corpus` ({"statement", ...}), best first."""
    docs = [Counter(terms(r.get("statement") or "")) for r in corpus]
    df = Counter(t for d in docs for t in d)

    def weigh(counts: Counter) -> dict[str, float]:
        vec = {t: c * (math.log((1 + len(docs)) / (1 + df[t])) + 1) for t, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {t: v / norm for t, v in vec.items()}

    query = weigh(Counter(terms(statement)))
    vectors = [weigh(d) for d in docs]
    scored = [(round(sum(v * vec.get(t, 0.0) for t, v in query.items()), 4), row)
              for row, vec in zip(corpus, vectors, strict=True)]
    return sorted(scored, key=lambda s: (-s[0], str(s[1].get("id"))))


async def _ranked(statement: str) -> list[tuple[float, dict]]:
    rows = await _q("MATCH (r:Requirement) RETURN r.id AS id, r.statement AS statement, "
                    "r.regime AS regime")
    return await asyncio.to_thread(rank_similar, statement, rows)


def _line(score: float, r: dict) -> str:
    text = (r.get("statement") or "").replace("\n", " ")
    return f"{r['id']} ({score:.3f}, {r.get('regime') or '?'}): {text[:300]}"


# -- graph and change log --------------------------------------------------------------------
async def _q(cypher: str, params: dict | None = None, *, write: bool = False) -> list[dict]:
    try:
        return await (await graph_store()).query(cypher, params, write=write)
    except GraphQueryError as e:
        raise ToolError("cypher_error", str(e)) from e


async def _require(label: str, id_: str, hint: str) -> None:
    if not await _q(f"MATCH (n:{label} {{id: $id}}) RETURN n.id AS id", {"id": id_}):
        raise ToolError("not_found", f"no {label} with id '{id_}'; {hint}")


async def _changes(files: Files) -> list[dict]:
    raw = await files.read_optional(CHANGES)
    try:
        return json.loads(raw)["changes"] if raw else []
    except (ValueError, KeyError, TypeError) as e:
        raise ToolError("bad_change_log", f"{CHANGES} is no longer the graph change log "
                        f"({e}); restore or delete it") from e


async def _log(ctx: ToolContext, change: dict) -> str:
    changes = await _changes(ctx.files)
    if change not in changes:
        changes.append(change)
    body = json.dumps({"job_id": ctx.job_id, "changes": changes}, ensure_ascii=False,
                      indent=1, default=str)
    return await ctx.files.write_text(CHANGES, body)


async def _link(ctx: ToolContext, rel: str, a: tuple[str, str],
                b: tuple[str, str]) -> tuple[bool, list[str]]:
    """MERGE (a)-[:rel]->(b) between existing nodes: (created now, changed paths)."""
    match, ids = f"MATCH (a:{a[0]} {{id: $a}}), (b:{b[0]} {{id: $b}}) ", {"a": a[1], "b": b[1]}
    if await _q(match + f"MATCH (a)-[:{rel}]->(b) RETURN a.id AS id", ids):
        return False, []
    change = {"op": "create_relationship", "type": rel, "from": a[1], "to": b[1]}
    path = await _log(ctx, change)  # logged first: a retry finds it logged
    await _q(match + f"MERGE (a)-[:{rel}]->(b)", ids, write=True)
    return True, [path]


# -- handlers --------------------------------------------------------------------------------
@tool(needs_approval=_needs_approval)
async def execute_cypher_query(ctx: ToolContext, a: CypherQueryArgs) -> ToolResult:
    """Run one Cypher statement on the requirements graph and get its rows (at most 100). Reads
    run at once; a query that writes waits for a person's approval."""
    kind, detail = classify_cypher(a.query)
    if kind == "invalid":
        raise ToolError("invalid_query", detail)
    write = kind == "write"
    if write and not ctx.approved:
        raise ToolError("write_not_approved", f"this query writes ({detail}): free-form writes "
                        "run only when a person approves the call, and this one was not "
                        "approved. Use create_requirement_node, create_fulfillment_relationship "
                        "or record_decision for ordinary changes")
    try:
        rows = await (await graph_store()).query(a.query, a.params, write=write,
                                                 max_rows=MAX_ROWS + 1)
    except GraphQueryError as e:
        code = "write_not_approved" if "read-only" in str(e) or "AccessMode" in str(e) \
            else "cypher_error"
        raise ToolError(code, str(e)) from e
    changed = [await _log(ctx, {"op": "cypher_write", "query": a.query,
                                "params": a.params})] if write else []
    if not rows:
        return ToolResult(f"Query ran{' (approved write)' if write else ''}: no rows.", changed)
    text = f"{min(len(rows), MAX_ROWS)} row(s), columns: {', '.join(rows[0])}\n" + "\n".join(
        json.dumps(r, ensure_ascii=False, default=str) for r in rows[:MAX_ROWS])
    if len(rows) > MAX_ROWS:
        text += f"\n[only the first {MAX_ROWS} rows; there are more: add LIMIT or aggregate]"
    if len(text) > ctx.limits.read_max_chars:
        text = (text[:ctx.limits.read_max_chars] + f"\n[... cut at {ctx.limits.read_max_chars} "
                "characters: return fewer properties or rows]")
    return ToolResult(text, changed)


@tool
async def get_database_schema(ctx: ToolContext, a: NoArgs) -> ToolResult:
    """Node labels with their properties, relationship types with their ends, and notes on the
    Cypher dialect."""
    schema = await (await graph_store()).schema()
    return ToolResult(json.dumps(schema, ensure_ascii=False, indent=1))


@tool
async def find_similar_requirements(ctx: ToolContext, a: SimilarArgs) -> ToolResult:
    """The k existing requirements most similar to a statement (TF-IDF cosine over words and
    word pairs), with scores."""
    ranked = await _ranked(a.statement)
    if not ranked:
        return ToolResult("The graph has no requirements yet.")
    top = [(s, r) for s, r in ranked[:a.k] if s > 0] or ranked[:1]
    return ToolResult(f"Top {len(top)} of {len(ranked)} requirements by TF-IDF cosine "
                      "similarity (1 = same words, 0 = none shared):\n" +
                      "\n".join(f"{n}. {_line(s, r)}" for n, (s, r) in enumerate(top, 1)))


@tool
async def check_for_duplicates(ctx: ToolContext, a: DuplicateArgs) -> ToolResult:
    """Existing requirements whose similarity to a statement reaches the threshold, or the
    closest one if none does."""
    ranked = await _ranked(a.statement)
    hits = [(s, r) for s, r in ranked if s >= a.threshold]
    if hits:
        return ToolResult(f"Likely duplicates (similarity >= {a.threshold:.2f}):\n" +
                          "\n".join(_line(s, r) for s, r in hits[:20]))
    closest = f" Closest: {_line(*ranked[0])}" if ranked else " The graph has no requirements."
    return ToolResult(f"No duplicate: no requirement reaches {a.threshold:.2f}.{closest}")


@tool
async def create_requirement_node(ctx: ToolContext, a: RequirementArgs) -> ToolResult:
    """Add a requirement to the graph (linked DERIVED_FROM the Regulation matching its regime).
    Needs an id not used yet."""
    job, found_or_made = ctx.job_id, " AS job, r.statement AS statement"
    found = await _q("MATCH (r:Requirement {id: $id}) RETURN r.created_by_job" + found_or_made,
                     {"id": a.id})
    made = found or await _q(
        "MERGE (r:Requirement {id: $id}) ON CREATE SET r.statement = $statement, r.regime = "
        "$regime, r.source = $source, r.created_by_job = $job RETURN r.created_by_job"
        + found_or_made, {**a.model_dump(), "job": job}, write=True)
    if made[0]["job"] != job:
        raise ToolError("requirement_exists", f"requirement '{a.id}' already exists (created "
                        f"by {made[0]['job']}): {made[0]['statement']!r}. Pick a new id; "
                        "check_for_duplicates tells whether it is the same requirement")
    # logged also when it exists from an earlier attempt: a retry after a crash between the
    # MERGE and the log still logs it, and the log deduplicates
    changed = [await _log(ctx, {"op": "create_node", "label": "Requirement", "id": a.id})]
    what = (f"Requirement {a.id} already exists, created by this job, with statement "
            f"{made[0]['statement']!r}; nothing changed" if found
            else f"Created Requirement {a.id}")
    regulation = await _q("MATCH (g:Regulation) WHERE g.id = $r OR g.name = $r "
                          "RETURN g.id AS id", {"r": a.regime})
    if regulation:
        made_link, paths = await _link(ctx, "DERIVED_FROM", ("Requirement", a.id),
                                       ("Regulation", regulation[0]["id"]))
        changed += paths
        what += f"; DERIVED_FROM Regulation {regulation[0]['id']}" if made_link else ""
    return ToolResult(what + ".", sorted(set(changed)))


@tool
async def create_fulfillment_relationship(ctx: ToolContext, a: FulfillmentArgs) -> ToolResult:
    """Record that an existing Control fulfills an existing Requirement."""
    await _require("Control", a.control_id, "list them with execute_cypher_query("
                   "'MATCH (c:Control) RETURN c.id, c.name')")
    await _require("Requirement", a.requirement_id, "create it with create_requirement_node")
    made, changed = await _link(ctx, "FULFILLS", ("Control", a.control_id),
                                ("Requirement", a.requirement_id))
    edge = f"(:Control {a.control_id})-[:FULFILLS]->(:Requirement {a.requirement_id})"
    return ToolResult(f"Created {edge}." if made else f"{edge} already exists.", changed)


@tool
async def get_entity_relationships(ctx: ToolContext, a: EntityArgs) -> ToolResult:
    """A node by id with its properties and all its incoming and outgoing relationships."""
    node = await _q("MATCH (n {id: $id}) RETURN n", {"id": a.id})
    if not node:
        raise ToolError("not_found", f"no node with id '{a.id}'")
    n = node[0]["n"]
    lines = [f"{n['_label']} {a.id}: " + json.dumps(
        {k: v for k, v in n.items() if k != "_label"}, ensure_ascii=False)]
    for title, pattern, arrow in (("Outgoing", "-[r]->", "-[:{}]->"),
                                  ("Incoming", "<-[r]-", "<-[:{}]-")):
        rows = await _q(f"MATCH (n {{id: $id}}){pattern}(m) RETURN r, m LIMIT 200", {"id": a.id})
        lines.append(f"{title} ({len(rows)}):")
        for row in rows:
            m = row["m"]
            text = (m.get("name") or m.get("statement") or "").replace("\n", " ")[:150]
            lines.append(f"  {arrow.format(row['r']['_type'])} {m['_label']} {m['id']}: {text}")
    return ToolResult("\n".join(lines))


@tool
async def count_graph_statistics(ctx: ToolContext, a: NoArgs) -> ToolResult:
    """Counts of nodes and relationships by type, requirements by regime, requirements no
    control fulfills."""
    schema = await (await graph_store()).schema()
    lines = ["Nodes:"]
    for label in schema["nodes"]:
        n = await _q(f"MATCH (n:`{label}`) RETURN count(n) AS n")
        lines.append(f"  {label}: {n[0]['n']}")
    lines.append("Relationships:")
    for rel in schema["relationships"]:
        n = await _q(f"MATCH ()-[r:`{rel}`]->() RETURN count(r) AS n")
        lines.append(f"  {rel}: {n[0]['n']}")
    regimes = await _q("MATCH (r:Requirement) RETURN r.regime AS regime, count(*) AS n "
                       "ORDER BY regime")
    uncovered = await _q("MATCH (r:Requirement) OPTIONAL MATCH (c:Control)-[:FULFILLS]->(r) "
                         "WITH r, count(c) AS k WHERE k = 0 RETURN count(r) AS n")
    mine = await _q("MATCH (r:Requirement) WHERE r.created_by_job = $job RETURN count(r) AS n",
                    {"job": ctx.job_id})
    lines += ["Requirements by regime: " + ", ".join(f"{r['regime']}: {r['n']}"
                                                     for r in regimes),
              f"Requirements without a fulfilling control: {uncovered[0]['n']}",
              f"Requirements created by this job: {mine[0]['n']}"]
    return ToolResult("\n".join(lines))


@tool
async def record_decision(ctx: ToolContext, a: DecisionArgs) -> ToolResult:
    """Record the decision on a requirement (accept; duplicate, with duplicate_of, which also
    links it DUPLICATE_OF; reject) in output/decision.json."""
    if (a.decision == "duplicate") != (a.duplicate_of is not None):
        raise ToolError("invalid_arguments", "duplicate_of goes with decision 'duplicate', "
                        "and only with it")
    changed: list[str] = []
    if a.decision == "duplicate" and a.duplicate_of is not None:
        if a.duplicate_of == a.requirement_id:
            raise ToolError("invalid_arguments", "a requirement cannot duplicate itself")
        await _require("Requirement", a.requirement_id, "create it with "
                       "create_requirement_node first, then link it as a duplicate")
        await _require("Requirement", a.duplicate_of, "check the id with "
                       "find_similar_requirements")
        _, changed = await _link(ctx, "DUPLICATE_OF", ("Requirement", a.requirement_id),
                                 ("Requirement", a.duplicate_of))
    elif a.decision == "accept":
        await _require("Requirement", a.requirement_id, "create it with "
                       "create_requirement_node before accepting it")
    files = ctx.files
    raw = await files.read_optional(DECISION)
    try:
        earlier = json.loads(raw).get("decisions", []) if raw else []
    except (ValueError, AttributeError):
        earlier = []
    entry = {"requirement_id": a.requirement_id, "decision": a.decision,
             "duplicate_of": a.duplicate_of, "reason": a.reason,
             "recorded_at": datetime.now(UTC).isoformat(timespec="seconds")}
    decisions = [d for d in earlier if d.get("requirement_id") != a.requirement_id] + [entry]
    doc: dict[str, Any] = {"job_id": ctx.job_id, **entry, "decisions": decisions,
           "graph_changes": await _changes(files)}
    path = await files.write_text(DECISION, json.dumps(doc, ensure_ascii=False, indent=1))
    return ToolResult(f"Recorded '{a.decision}' for {a.requirement_id} in {path} "
                      f"({len(doc['graph_changes'])} graph change(s) by this job so far).",
                      changed + [path])
