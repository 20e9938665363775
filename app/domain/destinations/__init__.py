"""A workspace's destinations, shared by schedules and workspace export: what a destination
must be (its form, path, endpoint and SFTP host rules) and what a role destination's trust is."""
