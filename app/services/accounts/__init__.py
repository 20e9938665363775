"""People's accounts and what they do: sign-in, the workspaces a person can open and their
members, and the audit trail of changes. Nothing here imports a capability."""
