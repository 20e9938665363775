"""RQ job entry points, the worker and the periodic scheduler: thin shells around app/services."""
