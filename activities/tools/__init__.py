"""The model's tools: the registry (registry.py: name, description, argument model),
the `run_tool` activity (run.py), the catalog of every tool (catalog.py), the tools
themselves: workspace files and todo_write (file_tools.py), tool_search (search.py),
web_search (web.py), and the ways tools arrive: Python packages (packages.py) and MCP
servers (mcp_config.py, mcp_sessions.py, listing.py, tool_names.py). The document app's
tools are a package of their own (examples/documents)."""
