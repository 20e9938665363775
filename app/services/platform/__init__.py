"""What every capability shares: the audit trail, the queues and leases, list paging, signed link tokens,
sign-in, the workspaces a person can open and what every kind of background work has in common.
Nothing here imports a capability."""
