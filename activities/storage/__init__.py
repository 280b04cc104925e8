"""S3-compatible storage: the only code that touches S3 (s3.py).

Workspaces (files.py, with the path gate of paths.py), conversations by reference
(conversations.py), the workspace activities (workspace.py), phase snapshots
(snapshots.py), a rewind's restore (workspace_restore.py) and large Temporal payloads
(payloads.py). Paths and keys come from workflows/contract/layout.py.
"""
