"""Operating the product: the staff lists and actions across workspaces, queue health, the coverage
registry's view, and the health checks."""
