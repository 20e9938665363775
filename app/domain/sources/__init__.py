"""What files and schedules are made from: the dataset catalog, a saved query's and a report's
validation, their print parameters, and the stored form of a request (filters, sorts, ranges)."""
