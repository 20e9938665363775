"""The demo seed: two workspaces, the people who sign in, and every product-wide dataset filled.

The Northwind administrator also owns a few starter saved queries and sample reports (one of
each kind) over them, validated exactly as the query builder and the Reports form validate, a
message template (a published version and a draft), and four schedules that show every state a
newcomer meets: an active daily query schedule to three recipients (two people and an outside
address), a weekly report schedule, one paused by a legacy import, and one whose last run failed
after two attempts, with its recipient rows failed and skipped (docs/schedules.md, "Demo data").

`flask seed-demo` and `flask serve-all` call `seed_demo`. Everything is written in one
transaction, so a seed that fails leaves nothing behind and a later run starts clean; once the
demo workspace exists, a run changes nothing. Choices come from a seeded random generator, so
the same rows come out on every machine for a given day; dates are relative to today so that
"last 7 days" filters always find data.

Hostile values (app/seed_data/hostile-values.txt) are in the data, where they test something,
but not where a newcomer looks first. Those that read as someone's name (Cyrillic, Hangul,
Devanagari…) are ordinary employees. The rest (formula-looking, padded, emoji, control
characters) belong to "test records": the employees of a team of their own, "Test records (edge
cases)", named with them, and one timesheet entry, shift and time-off request per hostile value
in the text columns. Its name sorts after every real team's, and its rows lie before what the
starter queries open with (the last 7 days, this week, pending requests), so lists and first
previews show ordinary data; the saved query and report "Test records (edge cases)" show them on
purpose, and the workspace export packages them with everything else.

What the demo holds is data, in data_workspaces.py (sign-ins, workspaces, teams, names),
data_sources.py (saved queries and reports), data_schedules.py (the template and the schedules)
and data_rows.py (what the dataset rows are drawn from); dataset_rows.py draws those rows. The
build_*.py modules write it, one capability each, and this module runs them in order: the order
of the writes and of the random draws is what keeps the rows the same from one version to the next.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from sqlalchemy import select

from app.extensions import db
from app.models import Workspace
from app.services.demo.build_datasets import add_dataset_rows
from app.services.demo.build_schedules import add_schedules, add_template
from app.services.demo.build_sources import add_sample_reports, add_saved_queries
from app.services.demo.build_workspaces import add_workspaces_and_people
from app.services.demo.data_workspaces import ADMIN, DEMO_WORKSPACE, NORTHWIND

RANDOM_SEED = 20240611


def seed_demo(rows: int) -> bool:
    """Create the demo workspaces with `rows` timesheet entries in the main one; False if already there."""
    if rows < 0:
        raise ValueError("rows must not be negative")
    if db.session.execute(select(Workspace.id).where(Workspace.name == DEMO_WORKSPACE)).first() is not None:
        return False
    try:
        _seed_everything(rows)
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    return True


def _seed_everything(rows: int) -> None:
    now = datetime.now(UTC)
    rng = random.Random(RANDOM_SEED)
    workspaces, people = add_workspaces_and_people(rng, now)
    main = next(workspace.row for workspace in workspaces if workspace.plan is NORTHWIND)
    admin = people[ADMIN]
    queries = add_saved_queries(main, admin, now)
    reports = add_sample_reports(main, admin, queries, now)
    template_version = add_template(main, admin, now)
    add_schedules(main, people, admin, (queries, reports), template_version, now)
    for workspace in workspaces:
        add_dataset_rows(rng, workspace, rows, now)
