"""Rules about when: timetables and the instants they fire at (schedules and a workspace's export
cadence), how often background work is retried and after what wait, and the pace of progress.
Nothing here imports a capability."""
