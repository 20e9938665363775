"""Password sign-in with throttling of repeated failures, password changes and session tokens.

Throttling counts an attempt in the database before its password is checked, in one conditional
UPDATE: concurrent attempts queue on the row, so no more than `login_max_failures` passwords are
ever checked per lockout, however many requests arrive at once.

A session carries the person's `session_token`, not their id; rotating the token ends every
session made with the old one (sign-out, a password change, losing the last membership).
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from functools import cache

from flask import current_app
from sqlalchemy import and_, case, func, literal, or_, select, update
from werkzeug.security import check_password_hash, generate_password_hash

from app.domain.errors import Conflict, ValidationError
from app.extensions import db, execute_dml
from app.models import Membership, Person
from app.models.types import UTCDateTime, utcnow

MIN_PASSWORD_LENGTH = 8

log = logging.getLogger(__name__)


@cache
def _dummy_hash() -> str:
    """Checked against when the email is unknown, so both paths take the same time.

    Made on first use: scrypt takes 32 MiB, which worker processes would otherwise pay at import.
    """
    return generate_password_hash("not-a-real-password")


class LoginThrottled(Conflict):
    """The person's sign-ins are locked after too many failures; the sign-in pages answer 429."""

    def __init__(self, seconds: int):
        super().__init__(f"Too many failed sign-ins. Try again in {seconds} seconds.")
        self.seconds = seconds


def hash_password(password: str) -> str:
    return generate_password_hash(password)


def new_session_token() -> str:
    return secrets.token_urlsafe(32)


def authenticate(email: str, password: str) -> Person | None:
    """The person whose email and password match, or None; raises LoginThrottled while locked."""
    person = db.session.execute(
        select(Person).where(func.lower(Person.email) == email.strip().lower())
    ).scalar_one_or_none()
    if person is None:
        check_password_hash(_dummy_hash(), password)
        log.info("sign-in failed: no person has the address given")
        return None
    if _checked_password(person, password):
        return person
    # The person's id, never the password or the address typed, so the log reveals neither.
    log.info("sign-in failed for person %s: wrong password", person.id)
    return None


def _checked_password(person: Person, password: str) -> bool:
    """Counts the attempt, then checks the password; a match clears the count.

    Raises LoginThrottled, without checking anything, when the attempt cannot be counted.
    """
    _count_attempt(person)
    if not check_password_hash(person.password_hash, password):
        return False
    db.session.execute(update(Person).where(Person.id == person.id).values(failed_logins=0, locked_until=None))
    db.session.commit()
    db.session.refresh(person)
    return True


def _count_attempt(person: Person) -> None:
    """One conditional UPDATE: counts an attempt unless the person is locked, and locks at the limit.

    An expired lock starts a fresh count. The count is committed before the password is checked,
    so a concurrent attempt already sees it.
    """
    settings = current_app.config["SETTINGS"]
    now = utcnow()
    lock_end = now + timedelta(seconds=settings.login_lockout_seconds)
    lock_expired = and_(Person.locked_until.is_not(None), Person.locked_until <= now)
    attempts = case((lock_expired, 1), else_=Person.failed_logins + 1)
    result = execute_dml(
        update(Person)
        .where(
            Person.id == person.id,
            or_(lock_expired, and_(Person.locked_until.is_(None), Person.failed_logins < settings.login_max_failures)),
        )
        .values(
            failed_logins=attempts,
            locked_until=case(
                (attempts >= settings.login_max_failures, literal(lock_end, UTCDateTime())),
                else_=None,
            ),
        )
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
    if result.rowcount == 1:
        return
    db.session.refresh(person)
    remaining = (person.locked_until - now).total_seconds() if person.locked_until else 0
    raise LoginThrottled(max(int(remaining), 0) + 1)


def change_password(person: Person, current_password: str, new_password: str, repeated: str) -> None:
    """Sets a new password and rotates the session token, so every other session ends.

    The current password is checked under the same throttling as sign-in (LoginThrottled); a
    refused change is a ValidationError naming its field. The caller signs the person in again
    with the new token to keep the session that made the change.
    """
    if not _checked_password(person, current_password):
        raise ValidationError("Your current password is not right.", "current_password")
    if len(new_password) < MIN_PASSWORD_LENGTH:
        raise ValidationError(f"The new password needs at least {MIN_PASSWORD_LENGTH} characters.", "new_password")
    if new_password != repeated:
        raise ValidationError("The two new passwords are not the same.", "repeat_password")
    if new_password == current_password:
        raise ValidationError("The new password is the same as the current one.", "new_password")
    person.password_hash = hash_password(new_password)
    person.session_token = new_session_token()
    db.session.commit()


def end_sessions(person: Person) -> None:
    """Every session signed in as this person ends at its next request."""
    person.session_token = new_session_token()
    db.session.commit()


def person_for_session(token: str) -> Person | None:
    return db.session.execute(select(Person).where(Person.session_token == token)).scalar_one_or_none()


def remove_membership(membership: Membership) -> None:
    """Removes a person from one workspace; removal from their last one ends their sessions."""
    person = membership.person
    db.session.delete(membership)
    db.session.flush()
    remaining = db.session.scalar(select(func.count()).select_from(Membership).where(Membership.person_id == person.id))
    if not remaining and not person.is_staff:
        person.session_token = new_session_token()
    db.session.commit()
