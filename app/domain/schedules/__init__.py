"""Schedules: a schedule's and a run's lifecycles, each recipient's delivery, the schedule form's and
legacy import's rules, message templates' versions and the attachment policy."""
