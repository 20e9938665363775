"""Re-encrypting every stored destination secret with the first key of CREDENTIALS_KEY, the last
step of replacing that key (README "Adding machines"): `flask credentials rotate`.

Each row is rewritten by a guarded UPDATE that names the ciphertext it read, so a secret an
administrator replaces meanwhile is left as they wrote it. Running it again changes nothing that
matters: a secret already under the first key is encrypted again under the same key.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update

from app.extensions import db, execute_dml
from app.models.export_destination import ExportDestination
from app.security.credentials import CredentialsUnreadable, rotate_secret


@dataclass(frozen=True)
class Rotation:
    reencrypted: int
    # Destinations whose secret none of the keys reads: their administrators must enter it again.
    unreadable: list[int]


def reencrypt_destination_secrets() -> Rotation:
    stored = db.session.execute(
        select(ExportDestination.id, ExportDestination.secret_ciphertext)
        .where(ExportDestination.secret_ciphertext.is_not(None))
        .order_by(ExportDestination.id)
    ).all()
    reencrypted, unreadable = 0, []
    for destination_id, ciphertext in stored:
        try:
            rotated = rotate_secret(ciphertext)
        except CredentialsUnreadable:
            unreadable.append(destination_id)
            continue
        reencrypted += execute_dml(
            update(ExportDestination)
            .where(ExportDestination.id == destination_id, ExportDestination.secret_ciphertext == ciphertext)
            .values(secret_ciphertext=rotated)
        ).rowcount
        db.session.commit()
    return Rotation(reencrypted, unreadable)
