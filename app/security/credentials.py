"""Destination secrets encrypted at rest with keys derived from CREDENTIALS_KEY.

Fernet (from `cryptography`) gives authenticated encryption: a ciphertext changed in the
database, or read with another key, fails to decrypt rather than yielding a wrong secret.
Each key of CREDENTIALS_KEY may be any string; its Fernet key is its SHA-256. CREDENTIALS_KEY
lists the keys newest first (MultiFernet): the first encrypts, any of them decrypts, and
`rotate_secret` re-encrypts a stored secret with the first, so a key is replaced without anyone
entering a secret again (README "Adding machines", `flask credentials rotate`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from flask import current_app

from app.domain.errors import Conflict


class CredentialsUnreadable(Conflict):
    """A stored secret cannot be decrypted with any of the configured CREDENTIALS_KEY keys: it was
    stored under another key, and the person has to enter it again."""


def _fernet(key: str | None = None) -> MultiFernet:
    keys: Sequence[str] = (key,) if key is not None else current_app.config["SETTINGS"].credentials_keys
    return MultiFernet(
        [Fernet(base64.urlsafe_b64encode(hashlib.sha256(each.encode("utf-8")).digest())) for each in keys]
    )


def _unreadable() -> CredentialsUnreadable:
    return CredentialsUnreadable(
        "The stored secret cannot be read with this server's CREDENTIALS_KEY; enter the secret again."
    )


def encrypt_secret(secret: str, key: str | None = None) -> str:
    return _fernet(key).encrypt(secret.encode("utf-8")).decode("ascii")


def decrypt_secret(ciphertext: str, key: str | None = None) -> str:
    try:
        return _fernet(key).decrypt(ciphertext.encode("ascii")).decode("utf-8")
    except (InvalidToken, ValueError) as exc:
        raise _unreadable() from exc


def rotate_secret(ciphertext: str) -> str:
    """The same secret encrypted with the first key of CREDENTIALS_KEY."""
    try:
        return _fernet().rotate(ciphertext.encode("ascii")).decode("ascii")
    except (InvalidToken, ValueError) as exc:
        raise _unreadable() from exc
