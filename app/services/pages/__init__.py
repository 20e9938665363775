"""What the pages of every capability share: list paging, where a download's bytes come from, and
the signed tokens of the public links in emails. Nothing here imports a capability."""
