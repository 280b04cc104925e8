"""`switchback console`: a small web app to watch and steer jobs (docs/ui.md, "Console")."""
