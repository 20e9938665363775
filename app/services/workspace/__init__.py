"""A workspace's own views for its administrators: the activity charts and the audit log."""
