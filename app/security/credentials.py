"""Destination secrets encrypted at rest with a key derived from CREDENTIALS_KEY.

Fernet (from `cryptography`) gives authenticated encryption: a ciphertext changed in the
database, or read with another key, fails to decrypt rather than yielding a wrong secret.
CREDENTIALS_KEY may be any string; the Fernet key is its SHA-256, so rotating the setting means
re-entering the secrets (a decryption failure says so).
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from flask import current_app

from app.domain.errors import Conflict


class CredentialsUnreadable(Conflict):
    """A stored secret cannot be decrypted with the configured CREDENTIALS_KEY: it was stored under
    another key, and the person has to enter it again."""


def _fernet(key: str | None = None) -> Fernet:
    key = key if key is not None else current_app.config["SETTINGS"].credentials_key
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(key.encode("utf-8")).digest()))


def encrypt_secret(secret: str, key: str | None = None) -> str:
    return _fernet(key).encrypt(secret.encode("utf-8")).decode("ascii")


def decrypt_secret(ciphertext: str, key: str | None = None) -> str:
    try:
        return _fernet(key).decrypt(ciphertext.encode("ascii")).decode("utf-8")
    except (InvalidToken, ValueError) as exc:
        raise CredentialsUnreadable(
            "The stored secret cannot be read with this server's CREDENTIALS_KEY; enter the secret again."
        ) from exc
