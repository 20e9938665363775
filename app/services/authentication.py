"""Password sign-in with throttling of repeated failures."""

from __future__ import annotations

from datetime import timedelta
from functools import cache

from flask import current_app
from sqlalchemy import func, select
from werkzeug.security import check_password_hash, generate_password_hash

from app.extensions import db
from app.models import Person
from app.models.types import utcnow


@cache
def _dummy_hash() -> str:
    """Checked against when the email is unknown, so both paths take the same time.

    Made on first use: scrypt takes 32 MiB, which worker processes would otherwise pay at import.
    """
    return generate_password_hash("not-a-real-password")


class LoginThrottled(Exception):
    def __init__(self, seconds: int):
        super().__init__(f"Too many failed sign-ins. Try again in {seconds} seconds.")
        self.seconds = seconds


def hash_password(password: str) -> str:
    return generate_password_hash(password)


def authenticate(email: str, password: str) -> Person | None:
    """The person whose email and password match, or None; raises LoginThrottled while locked."""
    settings = current_app.config["SETTINGS"]
    now = utcnow()
    person = db.session.execute(
        select(Person).where(func.lower(Person.email) == email.strip().lower())
    ).scalar_one_or_none()
    if person is None:
        check_password_hash(_dummy_hash(), password)
        return None
    if person.locked_until and person.locked_until > now:
        raise LoginThrottled(int((person.locked_until - now).total_seconds()) + 1)
    if check_password_hash(person.password_hash, password):
        person.failed_logins = 0
        person.locked_until = None
        db.session.commit()
        return person
    person.failed_logins += 1
    if person.failed_logins >= settings.login_max_failures:
        person.failed_logins = 0
        person.locked_until = now + timedelta(seconds=settings.login_lockout_seconds)
    db.session.commit()
    return None
