"""The graph store: the embedded LadybugDB store end to end (schema on first use, seed,
reads in read-only transactions, writes, concurrency, the one-process file lock), the
process-wide instance, and what can be checked of Neo4j without a server: which store the
environment picks, read/write routing to the driver's transaction functions, and a clear
`GraphUnavailable` when the server cannot be reached. No Neo4j server runs here, so the
Neo4j queries themselves (schema procedures, constraints) are not exercised.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from switchback_documents.graph_neo4j import Neo4jGraphStore
from switchback_documents.graph_store import (
    MODEL,
    EmbeddedGraphStore,
    GraphQueryError,
    GraphUnavailable,
    close_graph_store,
    graph_store,
    open_graph_store,
    seed_graph,
)


@pytest.fixture
async def store(tmp_path):
    s = EmbeddedGraphStore(tmp_path / "graph")
    yield s
    await s.close()


async def test_schema_is_created_on_first_use_and_kept(tmp_path):
    s = EmbeddedGraphStore(tmp_path / "sub" / "graph")
    schema = await s.schema()
    assert schema["engine"] == "ladybug"
    assert schema["nodes"] == MODEL["nodes"]
    assert schema["relationships"] == MODEL["relationships"]
    await s.query("CREATE (:Regulation {id: 'X', name: 'x'})", write=True)
    await s.close()
    again = EmbeddedGraphStore(tmp_path / "sub" / "graph")  # reopening keeps data and schema
    assert await again.query("MATCH (g:Regulation) RETURN g.id AS id") == [{"id": "X"}]
    await again.close()


async def test_seed_loads_sample_graph_idempotently(store):
    counts = await seed_graph(store)
    assert counts == {"regulations": 2, "requirements": 12, "controls": 4}
    await seed_graph(store)
    rows = await store.query("MATCH (r:Requirement) RETURN count(r) AS n")
    assert rows == [{"n": 12}]
    rows = await store.query("MATCH (c:Control)-[:FULFILLS]->(r:Requirement) "
                             "RETURN count(*) AS n")
    assert rows == [{"n": 7}]
    derived = await store.query("MATCH (r:Requirement)-[:DERIVED_FROM]->(g:Regulation) "
                                "RETURN g.id AS g, count(r) AS n ORDER BY g")
    assert derived == [{"g": "GDPR", "n": 6}, {"g": "GoBD", "n": 6}]


async def test_rows_are_plain_values(store):
    await seed_graph(store)
    row = (await store.query(
        "MATCH (c:Control {id: 'CTRL-ROPA'})-[f:FULFILLS]->(r:Requirement) RETURN c, f, r"))[0]
    assert row["c"] == {"_label": "Control", "id": "CTRL-ROPA",
                        "name": "Record of processing activities",
                        "description": row["c"]["description"]}
    assert row["f"] == {"_type": "FULFILLS"}
    assert row["r"]["_label"] == "Requirement" and row["r"]["id"] == "GDPR-003"
    path = (await store.query("MATCH p = (:Control {id: 'CTRL-ROPA'})-[:FULFILLS]->() "
                              "RETURN p"))[0]["p"]
    assert [n["id"] for n in path["nodes"]] == ["CTRL-ROPA", "GDPR-003"]
    assert path["relationships"] == [{"_type": "FULFILLS"}]
    assert await store.query("RETURN date('2024-03-01') AS d, [1, 2] AS l") == [
        {"d": "2024-03-01", "l": [1, 2]}]
    many = await store.query("UNWIND range(1, 50) AS i RETURN i", max_rows=7)
    assert [r["i"] for r in many] == list(range(1, 8))


async def test_reads_run_read_only_and_writes_need_write(store):
    with pytest.raises(GraphQueryError, match="read-only"):
        await store.query("CREATE (:Regulation {id: 'R', name: 'r'})")
    assert await store.query("MATCH (g:Regulation) RETURN g.id AS id") == []
    await store.query("CREATE (:Regulation {id: 'R', name: 'r'})", write=True)
    assert await store.query("MATCH (g:Regulation) RETURN g.id AS id") == [{"id": "R"}]
    with pytest.raises(GraphQueryError, match="primary key"):  # the write rolled back
        await store.query("CREATE (:Regulation {id: 'R', name: 'again'})", write=True)
    assert await store.query("MATCH (g:Regulation) RETURN g.name AS n") == [{"n": "r"}]


@pytest.mark.parametrize("query, message", [
    ("MATCH (n) RETURN n; MATCH (m) RETURN m", "one statement"),
    ("MATCH (n) RETURN n; CREATE (:Regulation {id: 'x'})", "one statement"),
    ("COMMIT", "transactions are managed"),
    ("BEGIN TRANSACTION", "transactions are managed"),
    ("RETURN 'open", "unterminated"),
    ("MATCH (n) /* no end", "unterminated"),
    ("  // only a comment", "empty"),
    ("MATCH (n:Nope) RETURN n", "Nope"),
    ("MATCH (n RETURN n", "Parser"),
])
async def test_refused_queries(store, query, message):
    with pytest.raises(GraphQueryError, match=message):
        await store.query(query, write=True)


async def test_trailing_semicolon_and_semicolons_in_literals_are_fine(store):
    assert await store.query("RETURN 'a;b' AS s; ") == [{"s": "a;b"}]


async def test_concurrent_writes_are_serialized_and_reads_go_on(store):
    writes = [store.query("CREATE (:Control {id: $id, name: 'c'})", {"id": f"C{i}"},
                          write=True) for i in range(20)]
    reads = [store.query("MATCH (c:Control) RETURN count(c) AS n") for _ in range(20)]
    await asyncio.gather(*writes, *reads)
    assert await store.query("MATCH (c:Control) RETURN count(c) AS n") == [{"n": 20}]


async def test_a_second_process_gets_a_clear_error(store, tmp_path):
    code = ("from switchback_documents.graph_store import EmbeddedGraphStore, GraphUnavailable\n"
            "try:\n    EmbeddedGraphStore(r'%s')\nexcept GraphUnavailable as e:\n"
            "    print('unavailable:', e)\n" % (tmp_path / "graph"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=Path(__file__).parents[1])
    assert "unavailable: cannot open the graph database" in out.stdout, out.stderr
    assert "lock" in out.stdout.lower()


async def test_environment_picks_the_store(monkeypatch, tmp_path):
    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.setenv("SWITCHBACK_GRAPH_PATH", str(tmp_path / "env-graph"))
    s = open_graph_store()
    assert isinstance(s, EmbeddedGraphStore) and s.path == tmp_path / "env-graph"
    await s.close()
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:7687")
    monkeypatch.setenv("NEO4J_USER", "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", "secret")
    n = open_graph_store()  # builds the driver, connects only on the first query
    assert isinstance(n, Neo4jGraphStore) and n.uri == "bolt://127.0.0.1:7687"
    await n.close()


async def test_process_wide_instance(monkeypatch, tmp_path):
    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.setenv("SWITCHBACK_GRAPH_PATH", str(tmp_path / "shared"))
    await close_graph_store()
    first, second = await asyncio.gather(graph_store(), graph_store())
    assert first is second and isinstance(first, EmbeddedGraphStore)
    assert await graph_store() is first
    await close_graph_store()
    assert (tmp_path / "shared").exists()


class _Session:
    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False

    async def execute_read(self, work):
        self.calls.append("read")
        return [{"via": "read"}]

    async def execute_write(self, work):
        self.calls.append("write")
        return [{"via": "write"}]


class _RecordingDriver:
    """Stands in for the neo4j driver only to see which transaction function is used."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.databases: list[str | None] = []

    def session(self, database=None):
        self.databases.append(database)
        return _Session(self.calls)

    async def close(self) -> None:
        pass


async def test_neo4j_routes_reads_and_writes_to_transaction_functions():
    driver = _RecordingDriver()
    s = Neo4jGraphStore("bolt://example:7687", database="graph", driver=driver)
    assert await s.query("MATCH (n) RETURN n") == [{"via": "read"}]
    assert driver.calls == ["read"]
    assert await s.query("CREATE (:Control {id: 'c'})", write=True) == [{"via": "write"}]
    assert driver.calls == ["read"] + ["write"] * (len(MODEL["nodes"]) + 1)  # + constraints
    await s.query("CREATE (:Control {id: 'd'})", write=True)
    assert driver.calls[-2:] == ["write", "write"] and len(driver.calls) == 6
    assert set(driver.databases) == {"graph"}
    with pytest.raises(GraphQueryError, match="one statement"):
        await s.query("MATCH (n) RETURN n; MATCH (m) RETURN m")
    assert len(driver.calls) == 6


async def test_neo4j_unreachable_is_graph_unavailable():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # free: nothing listens after the close
    s = Neo4jGraphStore(f"bolt://127.0.0.1:{port}", "neo4j", "secret")
    with pytest.raises(GraphUnavailable, match=f"127.0.0.1:{port}.*unreachable"):
        await s.query("MATCH (n) RETURN count(n)")
    await s.close()
