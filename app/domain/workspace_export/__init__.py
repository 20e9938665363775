"""Workspace export: the lifecycles of executions, packages, volumes, deliveries and notices, the
settings' rules, cadence and suspension, destination rules, and the coverage declarations."""
