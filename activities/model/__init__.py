"""The model endpoint: `call_model` and `summarize_conversation` against any
OpenAI-compatible Chat Completions endpoint (calls.py), the prompt they assemble
(prompt.py) and token estimates (tokens.py)."""
