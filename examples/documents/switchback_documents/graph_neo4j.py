"""The Neo4j implementation of `GraphStore` (activities/graph_store.py), through the official
driver: NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE. For fleets of several
workers, where the embedded store (one process per file) does not fit."""

from __future__ import annotations

import functools
from typing import Any

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError, TransientError

from switchback_documents.graph_store import (
    MODEL,
    GraphQueryError,
    GraphStore,
    GraphUnavailable,
    check_statement,
    plain,
)


class Neo4jGraphStore(GraphStore):
    """A Neo4j server through the official async driver; `id` gets a uniqueness constraint."""

    engine = "neo4j"

    def __init__(self, uri: str, user: str | None = None, password: str | None = None, *,
                 database: str | None = None, timeout_seconds: float = 60.0,
                 driver: Any = None) -> None:
        self.uri = uri
        auth = (user or "neo4j", password) if password is not None else None
        # Temporal owns retries: the driver tries each transaction once.
        self._driver = driver or neo4j.AsyncGraphDatabase.driver(
            uri, auth=auth, max_transaction_retry_time=0, connection_timeout=10)
        self._database = database
        self._timeout = timeout_seconds
        self._constraints = False

    async def query(self, cypher: str, params: dict | None = None, *, write: bool = False,
                    max_rows: int | None = None) -> list[dict]:
        check_statement(cypher)
        if write and not self._constraints:
            for label in MODEL["nodes"]:
                await self._tx(f"CREATE CONSTRAINT {label.lower()}_id IF NOT EXISTS FOR "
                               f"(n:{label}) REQUIRE n.id IS UNIQUE", {}, True, None)
            self._constraints = True
        return await self._tx(cypher, dict(params or {}), write, max_rows)

    async def _tx(self, cypher: str, params: dict, write: bool,
                  max_rows: int | None) -> list[dict]:
        work = neo4j.unit_of_work(timeout=self._timeout)(
            functools.partial(_neo4j_rows, cypher, params, max_rows))
        try:
            async with self._driver.session(database=self._database) as session:
                run = session.execute_write if write else session.execute_read
                return await run(work)
        except (AuthError, TransientError) as e:
            raise GraphUnavailable(f"Neo4j at {self.uri}: {e}") from e
        except Neo4jError as e:
            raise GraphQueryError(f"{e.code}: {e.message}") from e
        except (DriverError, OSError) as e:
            raise GraphUnavailable(f"Neo4j at {self.uri} is unreachable: {e}") from e

    async def schema(self) -> dict:
        nodes = {k: dict(v) for k, v in MODEL["nodes"].items()}
        rels = {k: dict(v) for k, v in MODEL["relationships"].items()}
        for r in await self.query("CALL db.schema.nodeTypeProperties() YIELD nodeLabels, "
                                  "propertyName, propertyTypes RETURN *"):
            for label in r["nodeLabels"] or []:
                props = nodes.setdefault(label, {})
                if r["propertyName"]:
                    props[r["propertyName"]] = "|".join(r["propertyTypes"] or [])
        for r in await self.query("CALL db.relationshipTypes() YIELD relationshipType AS t "
                                  "RETURN t"):
            rels.setdefault(r["t"], {"from": [], "to": [], "properties": {}})
        return {"engine": self.engine, "nodes": nodes, "relationships": rels,
                "notes": ["Neo4j Cypher; parameters are written $name"]}

    async def close(self) -> None:
        await self._driver.close()


async def _neo4j_rows(cypher: str, params: dict, max_rows: int | None, tx: Any) -> list[dict]:
    result = await tx.run(cypher, params)
    records = await result.fetch(max_rows) if max_rows is not None else [r async for r in result]
    return [dict(zip(result.keys(), plain(list(r.values())), strict=True)) for r in records]
