"""Rules every capability shares: who may read and change what, text and email-address checks,
time zones and timetables (schedules and a workspace's export cadence), retry and progress pace,
and the audit trail's vocabulary. Nothing here imports a capability."""
