"""Export files: a person's request for a file of a query, a report or the audit log, its production
by a worker, the outbox that puts it on the queue, its watchdog, its sweep, and the Files pages' reads."""
