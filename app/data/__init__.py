"""Reading datasets: the query runner and the aggregates reports need.

This layer sits below services and rendering: it reads rows and hands them over, and it never
formats a file.
"""
