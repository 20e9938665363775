"""Schedules: their timetables and forms, their runs, each recipient's delivery by email, the public
links in those emails, message templates, the attachment policy and the legacy import."""
