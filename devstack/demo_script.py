"""Builds `devstack/scripts/creator_demo.yaml`: the scripted model's part in the demo job.

The demo is a real 7-phase creator job over the sample documents in
`configs/creator/documents/`. Its script is generated from those documents with
the same extraction and chunking code the tools use, so every citation names a
real chunk id and quotes text that is really in that chunk. One todos.yaml is
deliberately written with write_file instead of todo_write, to show the gate rejecting it.

    python -m switchback.devstack.demo_script          rewrite the YAML after changing samples
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from switchback_documents.extract import Chunk, chunk_text, extract_text

ROOT = Path(__file__).resolve().parent.parent
DOCS = ["gobd_retention.md", "gdpr_erasure.txt", "records_policy.pdf"]
OUT = Path(__file__).resolve().parent / "scripts" / "creator_demo.yaml"
PIPELINE_OUT = Path(__file__).resolve().parent / "scripts" / "pipeline_demo.yaml"
OBLIGATION = re.compile(r"\b(must|shall|is required to|are required to|muss|müssen|"
                        r"ist verpflichtet|sind verpflichtet|aufzubewahren|hat [^.]* zu)\b", re.I)
GDPR_WORDS = re.compile(r"personal data|erasure|consent|data subject|personenbezogen", re.I)


def c(name: str, **args) -> dict:
    return {"name": name, "arguments": args}


def s(*calls: dict, content: str | None = None) -> dict:
    out: dict = {"tool_calls": list(calls)}
    if content:
        out["content"] = content
    return out


def chunks() -> list[Chunk]:
    out: list[Chunk] = []
    for name in DOCS:
        data = (ROOT / "configs" / "creator" / "documents" / name).read_bytes()
        out += chunk_text(f"documents/{name}", extract_text(name, data), start_index=len(out) + 1)
    return out


def requirements(all_chunks: list[Chunk], regime: str, limit: int) -> list[dict]:
    found = []
    for ch in all_chunks:
        for sentence in re.split(r"(?<=[.!?])\s+", ch.text):
            sentence = sentence.strip()
            if sentence.startswith("#") or len(sentence) < 30 or not OBLIGATION.search(sentence):
                continue
            is_gdpr = bool(GDPR_WORDS.search(sentence)) or "gdpr" in ch.source
            if (regime == "GDPR") != is_gdpr or sentence not in ch.text:
                continue
            found.append({"statement": " ".join(sentence.split()), "regime": regime,
                          "citations": [{"chunk_id": ch.id, "quote": sentence}]})
            if len(found) == limit:
                return found
    return found


def todo_list(*items: str) -> list[dict]:
    return [{"id": i, "content": t} for i, t in enumerate(items, 1)]


def build() -> list[dict]:
    cs = chunks()
    gobd, gdpr = requirements(cs, "GoBD", 8), requirements(cs, "GDPR", 6)
    for n, r in enumerate(gobd + gdpr, 1):  # what cite_document and write_requirement assign
        r["id"], r["citation_id"] = f"req_{n:03d}", f"CIT-{n:03d}"

    def cite(reqs: list[dict]) -> dict:
        return s(*(c("cite_document", chunk_id=r["citations"][0]["chunk_id"],
                     quote=r["citations"][0]["quote"]) for r in reqs), c("todo_complete"))

    def write(reqs: list[dict]) -> dict:
        return s(*(c("write_requirement", statement=r["statement"], regime=r["regime"],
                     citation_ids=[r["citation_id"]], rationale="obligation wording")
                   for r in reqs), c("todo_complete", notes=f"{len(reqs)} requirements"))
    gobd_chunk = next(ch.id for ch in cs if "gobd" in ch.source and len(ch.heading_path) > 1)
    gdpr_chunk = next(ch.id for ch in cs if "gdpr" in ch.source and len(ch.heading_path) > 1)
    docs = [f"documents/{d}" for d in DOCS]
    plan = ("# Execution plan\n\n## Phase A: prepare documents\n- extract and chunk all 3 "
            "documents\n\n## Phase B: GoBD requirements\n- obligations with citations\n\n"
            "## Phase C: GDPR requirements and output\n- obligations with citations\n"
            "- output/requirements.json\n")
    script = [  # phase 1: bootstrap (strategic)
        s(c("list_files"), content="I will look at the workspace first."),
        s(c("read_file", path="instructions.md")),
        s(c("write_file", path="workspace.md", content=(
            "# Workspace\n\n- Task: citation-backed GoBD/GDPR requirements (instructions.md)\n"
            f"- Documents: {', '.join(docs)}\n- Domain tools: extract_document_text, "
            "chunk_document\n")), c("todo_complete", notes="workspace explored")),
        s(c("write_file", path="main_plan.md", content=plan),
          c("todo_complete", notes="plan written")),
        s(c("todo_complete", notes="3 phases of 5-6 todos each")),
        s(c("todo_write", phase="Phase A: prepare documents",
            description="Extract and chunk every document",
            todos=todo_list(*[f"Extract the text of {d}" for d in docs],
                            *[f"Chunk {d}" for d in docs],
                            "Find requirement candidates in the chunks"))),
        s(c("todo_complete", notes="todos for phase A written")),
    ]
    script += [s(c("extract_document_text", path=d), c("todo_complete", notes=f"extracted {d}"))
               for d in docs]  # phase 2: tactical
    script += [s(c("chunk_document", path=d), c("todo_complete", notes=f"chunked {d}"))
               for d in docs]
    script += [s(c("identify_requirement_candidates"), c("todo_complete", notes="candidates"))]
    script += [  # phase 3: transition (strategic), with one rejected todos.yaml
        s(c("read_file", path="archive/phase_2.yaml"), c("read_file", path="chunks/manifest.json")),
        s(c("write_file", path="workspace.md", content=(
            f"# Workspace\n\n- {len(cs)} chunks in chunks/ (manifest: chunks/manifest.json)\n"
            "- extracted text in extracted/\n- GoBD: German markdown; GDPR: English text; "
            "policy: PDF\n")), c("todo_complete", notes="memory updated")),
        s(c("write_file", path="main_plan.md", content=plan.replace(
            "## Phase A: prepare documents", "## Phase A: prepare documents ✓ COMPLETE")),
          c("todo_complete", notes="phase A marked complete")),
        s(c("write_file", path="todos.yaml", content="todos:\n  - id: 1\n    content: extract\n"),
          c("todo_complete", notes="todos written")),
        s(c("todo_write", phase="Phase B: GoBD requirements", description="GoBD obligations",
            todos=todo_list("Read the GoBD candidates in candidates/candidates.json",
                            "Cite each GoBD obligation with cite_document",
                            "Write the GoBD requirements with write_requirement",
                            "Check output/requirements.json",
                            "Record open questions in notes/gobd.md")),
          c("todo_complete", notes="todos rewritten with todo_write")),
    ]
    script += [  # phase 4: tactical
        s(c("read_file", path="candidates/candidates.json"),
          c("read_file", path=f"chunks/{gobd_chunk}.md")),
        s(c("todo_complete", notes="read the GoBD candidates")),
        cite(gobd),
        write(gobd),
        s(c("read_file", path="output/requirements.json"), c("todo_complete", notes="valid")),
        s(c("write_file", path="notes/gobd.md", content="# Open questions\n\n- none\n"),
          c("todo_complete")),
    ]
    script += [  # phase 5: transition (strategic)
        s(c("read_file", path="archive/phase_4.yaml")),
        s(c("write_file", path="workspace.md", content=(
            f"# Workspace\n\n- {len(cs)} chunks in chunks/\n- requirements/: "
            f"{len(gobd)} GoBD requirements (req_001-req_{len(gobd):03d})\n")),
          c("todo_complete")),
        s(c("write_file", path="main_plan.md", content=plan.replace(" prepare documents",
            " prepare documents ✓ COMPLETE").replace(" GoBD requirements", " GoBD requirements "
            "✓ COMPLETE")), c("todo_complete")),
        s(c("todo_write", phase="Phase C: GDPR requirements and output",
            description="GDPR obligations and the deliverable",
            todos=todo_list("Read the GDPR chunks", "Cite each GDPR obligation",
                            "Write the GDPR requirements with write_requirement",
                            "Check output/requirements.json",
                            "Note the number of requirements in workspace.md")),
          c("todo_complete", notes="todos for phase C written")),
    ]
    script += [  # phase 6: tactical
        s(c("read_file", path=f"chunks/{gdpr_chunk}.md"), c("todo_complete")),
        cite(gdpr),
        write(gdpr),
        s(c("read_file", path="output/requirements.json"), c("todo_complete", notes="valid")),
        s(c("write_file", path="notes/count.md", content=f"{len(gobd) + len(gdpr)} requirements"),
          c("todo_complete", notes=f"{len(gobd) + len(gdpr)} requirements in all")),
    ]
    script += [  # phase 7: final strategic phase
        s(c("list_files", path="output")),
        s(c("write_file", path="workspace.md", content=(
            f"# Workspace\n\n- Done: {len(gobd) + len(gdpr)} requirements in "
            "output/requirements.json\n")), c("todo_complete")),
        s(c("write_file", path="main_plan.md", content=plan + "\nAll phases complete.\n"),
          c("todo_complete", notes="plan complete")),
        s(c("job_complete", summary=f"Extracted {len(gobd)} GoBD and {len(gdpr)} GDPR "
            "requirements with citations from 3 documents",
            deliverables=["output/requirements.json"], confidence=0.9,
            notes="Scripted demo run.")),
    ]
    return script


def demo_requirements() -> list[dict]:
    """The requirements the creator demo writes (write_requirement numbers them in order)."""
    cs = chunks()
    reqs = requirements(cs, "GoBD", 8) + requirements(cs, "GDPR", 6)
    for n, r in enumerate(reqs, 1):
        r["id"] = f"req_{n:03d}"
    return reqs


def validator(req: dict, duplicate_of: str | None = None) -> list[dict]:
    """One validator job (3 phases): look, decide, record, finish."""
    rid, statement = req["id"], req["statement"]
    cite = req["citations"][0]
    plan = f"# Plan\n\nValidate {rid}: similar requirements, decision, record.\n"
    node = c("create_requirement_node", id=rid, statement=statement, regime=req["regime"],
             source=f"{cite['chunk_id']}: {cite['quote'][:80]}")
    decide = [node, c("record_decision", requirement_id=rid, decision="duplicate",
                      duplicate_of=duplicate_of,
                      reason="the graph already holds this obligation")] if duplicate_of else [
        node, c("record_decision", requirement_id=rid, decision="accept",
                reason="no requirement in the graph states this obligation")]
    return [
        s(c("list_files"), c("read_file", path="documents/requirement.json")),
        s(c("write_file", path="workspace.md", content=f"# Workspace\n\n- validating {rid}\n"),
          c("todo_complete", notes="explored")),
        s(c("write_file", path="main_plan.md", content=plan), c("todo_complete")),
        s(c("todo_complete")),
        s(c("todo_write", phase=f"Validate {rid}", description="one requirement",
            todos=todo_list("Find similar requirements and duplicates",
                            "Decide and change the graph", "Record the decision")),
          c("todo_complete")),
        s(c("find_similar_requirements", statement=statement, k=3),
          c("check_for_duplicates", statement=statement), c("todo_complete")),
        s(decide[0], c("count_graph_statistics"), c("todo_complete")),
        s(decide[-1], c("todo_complete", notes="decision recorded")),
        s(c("read_file", path="output/decision.json")),
        s(c("write_file", path="workspace.md", content=f"# Workspace\n\n- {rid}: decided\n"),
          c("todo_complete")),
        s(c("write_file", path="main_plan.md", content=plan + "\nDone.\n"), c("todo_complete")),
        s(c("job_complete", summary=f"{rid}: decision recorded",
            deliverables=["output/decision.json"], confidence=0.8, notes="")),
    ]


def pipeline_map() -> dict[str, list[dict]]:
    """Job-id suffix -> script, for `python -m switchback.devstack.scripted_model --script-map`."""
    reqs = demo_requirements()
    out = {"-creator": build()}
    for n, r in enumerate(reqs):
        dup = "GDPR-002" if n == len(reqs) - 1 else None  # one duplicate, for the demo
        out[f"-validate-{r['id']}"] = validator(r, dup)
    return out


def main() -> None:
    header = ("# Generated by `python -m switchback.devstack.demo_script` from "
              "configs/creator/documents.\n"
              "# The scripted model's answers for the creator demo job (7 phases).\n")
    OUT.write_text(header + yaml.safe_dump({"steps": build()}, sort_keys=False,
                                           allow_unicode=True, width=100), encoding="utf-8")
    PIPELINE_OUT.write_text(
        "# Generated by `python -m switchback.devstack.demo_script`: the scripted model's "
        "answers for\n"
        "# the pipeline demo, by job-id suffix (the creator, then one validator per\n"
        "# requirement it writes).\n"
        + yaml.safe_dump(pipeline_map(), sort_keys=False, allow_unicode=True, width=100),
        encoding="utf-8")
    print(f"wrote {OUT} and {PIPELINE_OUT}")


if __name__ == "__main__":
    main()
