"""switchback-documents: the document app on switchback's engine - a creator job that turns
documents into cited requirements, a validator job per requirement against a graph of
earlier ones, and the DocumentPipeline workflow that runs them. Its parts:

    extract.py, document_tools.py   text and chunks of documents/ (PDF, DOCX, HTML, text)
    candidates.py, creator_tools.py requirement candidates, citations, write_requirement
    graph_store.py, graph_neo4j.py  the requirements graph (embedded LadybugDB or Neo4j)
    validator_tools.py              the validator's graph queries and record_decision
    pipeline.py                     the DocumentPipeline workflow
    pipeline_contract.py            its names, input and result
    pipeline_activities.py          its activities (read what one job left for the next)
    app.py, cli.py                  its registration (switchback.apps) and `switchback pipeline`

Kept light: the workflow sandbox imports this package.
"""
