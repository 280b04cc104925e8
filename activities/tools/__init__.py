"""The model's tools: the registry (registry.py: name, description, argument model),
the `run_tool` activity (run.py), the catalog of every tool (catalog.py) and the
tools themselves: workspace files and todo_write (workspace.py), tool_search
(search.py), documents (documents.py), the creator's (creator.py, candidates.py) and
the validator's (validator.py)."""
