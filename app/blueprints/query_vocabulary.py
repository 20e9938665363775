"""The names the query and file templates read to show a query: operator, range and heading labels, the catalog."""

from __future__ import annotations

from app.domain.sources.catalog import get_dataset
from app.domain.sources.query_spec import OPERATORS, RELATIVE_RANGES, VALUELESS
from app.services.files.file_requests import HEADINGS, TIME_STAMPS


def query_vocabulary() -> dict:
    """A context processor for the blueprints whose pages show or build query definitions."""
    return {
        "OPERATORS": OPERATORS,
        "VALUELESS": VALUELESS,
        "RELATIVE_RANGES": RELATIVE_RANGES,
        "HEADINGS": HEADINGS,
        "TIME_STAMPS": TIME_STAMPS,
        "get_dataset": get_dataset,
    }
