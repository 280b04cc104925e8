"""The validator's graph tools against the embedded graph (seeded sample, graph file in
tmp_path) and a real S3 workspace: write detection, approval of free-form writes, result
caps, similarity ranking (EN and DE), duplicates, the creating tools' idempotence and
change log, and `output/decision.json`.
"""

from __future__ import annotations

import json
import uuid

import pytest
import pytest_asyncio

from switchback import Tool, ToolError
from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.tools.catalog import HANDLERS, SOURCES
from switchback.workflows.contract import ToolLimits, WorkspaceRef
from switchback_documents import validator_tools as validator
from switchback_documents.graph_store import close_graph_store, graph_store, seed_graph
from switchback_documents.validator_tools import (
    CypherQueryArgs,
    DecisionArgs,
    DuplicateArgs,
    EntityArgs,
    FulfillmentArgs,
    NoArgs,
    RequirementArgs,
    SimilarArgs,
    rank_similar,
)

LIMITS = ToolLimits(read_max_chars=20000, max_file_bytes=5_000_000, min_todos=5, max_todos=20)
APPROVED = LIMITS.model_copy(update={"approved": True})
SPECS = [v for v in vars(validator).values() if isinstance(v, Tool)]
SPEC = {s.name: s for s in SPECS}


@pytest_asyncio.fixture
async def graph(monkeypatch, tmp_path):
    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.setenv("SWITCHBACK_GRAPH_PATH", str(tmp_path / "graph"))
    await close_graph_store()
    store = await graph_store()
    await seed_graph(store)
    yield store
    await close_graph_store()


def workspace(s3) -> WorkspaceFiles:
    return WorkspaceFiles(s3, WorkspaceRef(bucket="switchback",
                                           job_id=f"val-{uuid.uuid4().hex[:10]}"))


@pytest.fixture
def files(s3) -> WorkspaceFiles:
    return workspace(s3)


async def call(files, name, args, limits=LIMITS):
    return await HANDLERS[name](files, args, limits)


async def changes(files) -> list[dict]:
    return json.loads(await files.read_text("graph_changes.json"))["changes"]


@pytest.mark.parametrize("query, writes", [
    ("MATCH (n) RETURN n", False),
    ("MATCH (n) RETURN 'CREATE'", False),
    ('MATCH (n) WHERE n.statement CONTAINS "DELETE it; DROP" RETURN n', False),
    ("MATCH (n) // SET n.x = 1\nRETURN n", False),
    ("MATCH (n) /* DETACH DELETE n */ RETURN n", False),
    ("MATCH (n) RETURN n.`create`, n.set AS x, {merge: 1} AS m, $delete AS p", False),
    ("MATCH (n:Set) RETURN n", False),
    ("CALL db.labels() YIELD label RETURN label", False),
    ("CALL show_tables() RETURN *", False),
    ("MATCH (n) CALL { WITH n RETURN n.id AS i } RETURN i", False),
    ("MATCH (n) WHERE n.name = 'it\\'s CREATE' RETURN n", False),
    ("CREATE (:Control {id: 'x'})", True),
    ("create (:Control {id: 'x'})", True),
    ("MERGE (c:Control {id: 'x'})", True),
    ("MATCH (n {id: 'x'}) SET n.name = 'y'", True),
    ("MATCH (n) DELETE n", True),
    ("MATCH (n) DETACH DELETE n", True),
    ("MATCH (n) REMOVE n.name", True),
    ("DROP TABLE Control", True),
    ("LOAD CSV FROM 'file:///x.csv' AS row RETURN row", True),
    ("MATCH (n) FOREACH (x IN [1] | SET n.k = x)", True),
    ("MATCH (n)\nWITH n /* keep */ SET n.k = 'RETURN'", True),
    ("CALL apoc.create.node(['X'], {}) YIELD node RETURN node", True),
    ("CALL apoc.cypher.doIt('CREATE (x)', {}) YIELD value RETURN value", True),
    ("CALL `db.labels`()", True),
    ("COPY Control FROM 'controls.csv'", True),
    ("MATCH (n) RETURN n; CREATE (x)", False),  # invalid, refused without asking anybody
    ("RETURN 'unterminated", False),
])
def test_write_detection(query, writes):
    assert SPEC["execute_cypher_query"].needs_approval(CypherQueryArgs(query=query)) is writes


def test_only_free_form_cypher_asks_for_approval():
    assert [s.name for s in SPECS if s.needs_approval] == ["execute_cypher_query"]
    assert len(SPECS) == 9 and all(SOURCES[s.name] == "package switchback-documents"
                                   and s.name in HANDLERS
                                   for s in SPECS)
    for s in SPECS:
        assert s.args.model_json_schema()["type"] == "object"


async def test_read_query(graph, files):
    out = await call(files, "execute_cypher_query", CypherQueryArgs(
        query="MATCH (c:Control)-[:FULFILLS]->(r:Requirement {id: $id}) RETURN c.id AS control",
        params={"id": "GDPR-003"}))
    assert out.text == '1 row(s), columns: control\n{"control": "CTRL-ROPA"}'
    assert out.changed == []


async def test_write_refused_without_approval_and_run_when_approved(graph, files):
    args = CypherQueryArgs(query="CREATE (:Control {id: 'CTRL-NEW', name: 'Four eyes'})")
    with pytest.raises(ToolError) as e:
        await call(files, "execute_cypher_query", args)
    assert e.value.code == "write_not_approved" and "CREATE" in str(e.value)
    assert await graph.query("MATCH (c:Control {id: 'CTRL-NEW'}) RETURN c.id") == []
    assert await files.read_optional("graph_changes.json") is None
    out = await call(files, "execute_cypher_query", args, APPROVED)
    assert out.text == "Query ran (approved write): no rows."
    assert await graph.query("MATCH (c:Control {id: 'CTRL-NEW'}) RETURN c.name AS n") == [
        {"n": "Four eyes"}]
    assert await changes(files) == [{"op": "cypher_write", "query": args.query, "params": {}}]
    with pytest.raises(ToolError) as e:  # an approved write that fails is not logged
        await call(files, "execute_cypher_query",
                   CypherQueryArgs(query="CREATE (:Nope {id: 'x'})"), APPROVED)
    assert e.value.code == "cypher_error"
    assert len(await changes(files)) == 1


async def test_bad_queries_come_back_as_tool_errors(graph, files):
    for query, code in [("MATCH (n) RETURN n; MATCH (m) RETURN m", "invalid_query"),
                        ("BEGIN TRANSACTION", "invalid_query"),
                        ("MATCH (n:Nope) RETURN n", "cypher_error"),
                        ("MATCH (n RETURN n", "cypher_error")]:
        with pytest.raises(ToolError) as e:
            await call(files, "execute_cypher_query", CypherQueryArgs(query=query))
        assert e.value.code == code, query


async def test_results_are_capped(graph, files):
    out = await call(files, "execute_cypher_query",
                     CypherQueryArgs(query="UNWIND range(1, 500) AS i RETURN i"))
    assert out.text.startswith("100 row(s), columns: i\n")
    assert '{"i": 100}' in out.text and '{"i": 101}' not in out.text
    assert "only the first 100 rows" in out.text
    small = LIMITS.model_copy(update={"read_max_chars": 300})
    out = await call(files, "execute_cypher_query",
                     CypherQueryArgs(query="MATCH (r:Requirement) RETURN r"), small)
    assert len(out.text) < 400 and "cut at 300 characters" in out.text


async def test_schema_tool(graph, files):
    schema = json.loads((await call(files, "get_database_schema", NoArgs())).text)
    assert set(schema["nodes"]) == {"Requirement", "Control", "Regulation"}
    assert schema["relationships"]["FULFILLS"]["from"] == ["Control"]
    assert schema["notes"]


def test_similarity_ranks_en_and_de():
    corpus = [
        {"id": "A", "statement": "Invoices must be retained for eight years."},
        {"id": "B", "statement": "Personal data must be erased when the data subject asks."},
        {"id": "C", "statement": "Buchungen dürfen nicht unkenntlich verändert werden."},
        {"id": "D", "statement": "Rechnungen sind acht Jahre aufzubewahren."},
    ]
    ranked = rank_similar("Retaining invoices for eight years is required.", corpus)
    assert [r["id"] for _, r in ranked][:1] == ["A"] and ranked[0][0] > 0.3
    assert ranked[-1][0] == 0.0
    ranked = rank_similar("Eine Buchung darf nicht verändert werden.", corpus)
    assert ranked[0][1]["id"] == "C" and ranked[0][0] > 0.3
    ranked = rank_similar("Die Rechnung ist acht Jahre lang aufzubewahren.", corpus)
    assert ranked[0][1]["id"] == "D" and ranked[0][0] > ranked[1][0] + 0.3
    assert rank_similar(corpus[1]["statement"], corpus)[0] == (1.0, corpus[1])


async def test_find_similar_requirements(graph, files):
    out = await call(files, "find_similar_requirements", SimilarArgs(
        statement="Breaches of personal data must be notified to the supervisory authority "
                  "within 72 hours.", k=3))
    lines = out.text.splitlines()
    assert lines[0].startswith("Top 3 of 12 requirements") and len(lines) == 4
    assert lines[1].startswith("1. GDPR-004 (")
    out = await call(files, "find_similar_requirements", SimilarArgs(
        statement="Bücher und Jahresabschlüsse müssen zehn Jahre aufbewahrt werden."))
    assert out.text.splitlines()[1].startswith("1. GOBD-002 (")


async def test_check_for_duplicates(graph, files):
    out = await call(files, "check_for_duplicates", DuplicateArgs(
        statement="Personal data must be erased without undue delay when the data subject "
                  "requests erasure and no legal ground for keeping it applies"))
    assert out.text.startswith("Likely duplicates (similarity >= 0.80):\nGDPR-001 (1.000")
    out = await call(files, "check_for_duplicates", DuplicateArgs(
        statement="Visitors must sign in at the reception desk."))
    assert out.text.startswith("No duplicate: no requirement reaches 0.80. Closest: ")
    out = await call(files, "find_similar_requirements", SimilarArgs(statement="Lunch at noon."))
    assert out.text.startswith("Top 1 of 12") and "(0.000," in out.text  # nothing in common
    out = await call(files, "check_for_duplicates", DuplicateArgs(
        statement="Eine Buchung darf nicht verändert werden; Änderungen sind zu protokollieren.",
        threshold=0.5))
    assert out.text.splitlines()[1].startswith("GOBD-003 (")


async def test_create_requirement_node_is_idempotent_and_logged(graph, files, s3):
    args = RequirementArgs(id="GDPR-007", statement="Data protection impact assessments are "
                           "required for high-risk processing.", regime="GDPR",
                           source="GDPR Art. 35")
    out = await call(files, "create_requirement_node", args)
    assert out.text == "Created Requirement GDPR-007; DERIVED_FROM Regulation GDPR."
    assert out.changed == ["graph_changes.json"]
    row = await graph.query("MATCH (r:Requirement {id: 'GDPR-007'})-[:DERIVED_FROM]->"
                            "(g:Regulation) RETURN r.created_by_job AS job, g.id AS g")
    assert row == [{"job": files.ws.job_id, "g": "GDPR"}]
    again = await call(files, "create_requirement_node", args)  # e.g. a retried activity
    assert again.text.startswith("Requirement GDPR-007 already exists, created by this job")
    assert await changes(files) == [
        {"op": "create_node", "label": "Requirement", "id": "GDPR-007"},
        {"op": "create_relationship", "type": "DERIVED_FROM", "from": "GDPR-007", "to": "GDPR"}]
    other = workspace(s3)
    with pytest.raises(ToolError) as e:
        await call(other, "create_requirement_node", args)
    assert e.value.code == "requirement_exists" and files.ws.job_id in str(e.value)
    assert await other.read_optional("graph_changes.json") is None
    out = await call(files, "create_requirement_node", RequirementArgs(
        id="X-1", statement="Something new.", regime="ISO 27001", source="A.5"))
    assert out.text == "Created Requirement X-1."  # no Regulation matches: no link


async def test_create_fulfillment_relationship(graph, files):
    args = FulfillmentArgs(control_id="CTRL-ARCHIVE", requirement_id="GOBD-004")
    out = await call(files, "create_fulfillment_relationship", args)
    assert out.text.startswith("Created (:Control CTRL-ARCHIVE)-[:FULFILLS]->")
    out = await call(files, "create_fulfillment_relationship", args)
    assert out.text.endswith("already exists.") and out.changed == []
    assert await graph.query("MATCH (:Control {id: 'CTRL-ARCHIVE'})-[f:FULFILLS]->"
                             "(:Requirement {id: 'GOBD-004'}) RETURN count(f) AS n") == [{"n": 1}]
    assert await changes(files) == [{"op": "create_relationship", "type": "FULFILLS",
                                     "from": "CTRL-ARCHIVE", "to": "GOBD-004"}]
    for bad in (FulfillmentArgs(control_id="CTRL-NOPE", requirement_id="GOBD-004"),
                FulfillmentArgs(control_id="CTRL-ARCHIVE", requirement_id="NOPE")):
        with pytest.raises(ToolError) as e:
            await call(files, "create_fulfillment_relationship", bad)
        assert e.value.code == "not_found"


async def test_get_entity_relationships(graph, files):
    out = await call(files, "get_entity_relationships", EntityArgs(id="GDPR-001"))
    lines = out.text.splitlines()
    assert lines[0].startswith('Requirement GDPR-001: {"id": "GDPR-001"')
    assert "Outgoing (1):" in lines and "  -[:DERIVED_FROM]-> Regulation GDPR: General Data " \
        "Protection Regulation (EU) 2016/679" in lines
    assert "Incoming (1):" in lines and "  <-[:FULFILLS]- Control CTRL-DELETION: Deletion " \
        "concept" in lines
    with pytest.raises(ToolError) as e:
        await call(files, "get_entity_relationships", EntityArgs(id="NOPE"))
    assert e.value.code == "not_found"


async def test_count_graph_statistics(graph, files):
    out = (await call(files, "count_graph_statistics", NoArgs())).text
    for line in ("  Requirement: 12", "  Control: 4", "  Regulation: 2", "  FULFILLS: 7",
                 "  DERIVED_FROM: 12", "  DUPLICATE_OF: 0",
                 "Requirements by regime: GDPR: 6, GoBD: 6",
                 "Requirements without a fulfilling control: 5",
                 "Requirements created by this job: 0"):
        assert line in out.splitlines(), line


async def test_record_decision(graph, files):
    await call(files, "create_requirement_node", RequirementArgs(
        id="NEW-1", statement="Personal data must be deleted without undue delay on request.",
        regime="GDPR", source="notes.md"))
    with pytest.raises(ToolError) as e:
        await call(files, "record_decision", DecisionArgs(
            requirement_id="NEW-1", decision="duplicate", reason="same"))
    assert e.value.code == "invalid_arguments"
    with pytest.raises(ToolError) as e:
        await call(files, "record_decision", DecisionArgs(
            requirement_id="NEW-2", decision="accept", reason="new"))
    assert e.value.code == "not_found"
    out = await call(files, "record_decision", DecisionArgs(
        requirement_id="NEW-1", decision="duplicate", duplicate_of="GDPR-001",
        reason="Same erasure duty as GDPR-001 (score 0.41)."))
    assert out.text.startswith("Recorded 'duplicate' for NEW-1 in output/decision.json (3 graph")
    assert set(out.changed) == {"graph_changes.json", "output/decision.json"}
    assert await graph.query("MATCH (:Requirement {id: 'NEW-1'})-[:DUPLICATE_OF]->"
                             "(d:Requirement) RETURN d.id AS d") == [{"d": "GDPR-001"}]
    await call(files, "record_decision", DecisionArgs(
        requirement_id="OTHER-9", decision="reject", reason="Not a requirement."))
    doc = json.loads(await files.read_text("output/decision.json"))
    assert doc["job_id"] == files.ws.job_id
    assert (doc["requirement_id"], doc["decision"]) == ("OTHER-9", "reject")
    assert [(d["requirement_id"], d["decision"], d["duplicate_of"]) for d in doc["decisions"]] \
        == [("NEW-1", "duplicate", "GDPR-001"), ("OTHER-9", "reject", None)]
    assert doc["graph_changes"] == [
        {"op": "create_node", "label": "Requirement", "id": "NEW-1"},
        {"op": "create_relationship", "type": "DERIVED_FROM", "from": "NEW-1", "to": "GDPR"},
        {"op": "create_relationship", "type": "DUPLICATE_OF", "from": "NEW-1",
         "to": "GDPR-001"}]
