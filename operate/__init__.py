"""Operator tooling: replay, rerun and report on jobs (used by starter.py)."""
