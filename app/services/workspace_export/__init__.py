"""Workspace export: settings and cadence, executions that produce packages, the packages' volumes,
their deliveries to customer storage destinations, retention, notices and the coverage registry."""
