"""What the schedule tests post: the pages' URLs and a valid schedule form to vary."""

from __future__ import annotations


def schedules_url(world, tail: str = "") -> str:
    return f"/w/{world.workspace.id}/schedules/{tail}"


def schedule_form(query, **overrides) -> dict:
    """A valid daily CSV schedule of `query`; an override of None leaves that field out."""
    data = {
        "name": "Morning hours",
        "source": f"query:{query.id}",
        "format": "csv",
        "heading": "names",
        "frequency": "daily",
        "time": "07:30",
        "zone": "Europe/London",
        "people": [],
        "addresses": "",
        "custom_message": "Here are the hours.",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}
