"""Workspace-export package writers: rows and columns in, zipped volumes and a manifest out.

Like the file writers beside them, they never query and import no models, database or Flask:
app/services/workspace_export/package_writing.py feeds them rows from app/data/package_snapshot.py.
"""
