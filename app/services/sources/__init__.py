"""What files and schedules are made from: saved queries and reports (their editing, and a report's
preview). Nothing here knows about schedules: removing a source that schedules send is
app/services/schedules/source_removal.py."""
