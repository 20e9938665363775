"""Keys on several machines (README "Adding machines"), on PostgreSQL: without SECRET_KEY and
CREDENTIALS_KEY, web, worker and scheduler refuse to start against a shared database and say what
to set; CREDENTIALS_KEY's older keys still read what they encrypted, and `flask credentials rotate`
re-encrypts every stored secret with the first key."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from app.extensions import db
from app.models.export_destination import ExportDestination
from app.security.credentials import CredentialsUnreadable, decrypt_secret, encrypt_secret
from tests import factories
from tests.fixtures.workers import PROJECT_ROOT, SCHEDULER_COMMAND, WORKER_COMMAND

START_COMMANDS = {
    "web": [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
    "worker": WORKER_COMMAND,
    "scheduler": SCHEDULER_COMMAND,
}
ROTATE_COMMAND = [sys.executable, "-m", "flask", "--app", "wsgi", "credentials", "rotate"]
NEW_KEY, OLD_KEY = "credentials-key-2026-12", "credentials-key-2026-06"
ROTATING = pytest.mark.environment(CREDENTIALS_KEY=f"{NEW_KEY}, {OLD_KEY}")


def _without_keys(tmp_path) -> dict[str, str]:
    """The test environment (DATABASE_URL is the test's PostgreSQL) with neither key set, and an
    instance folder of its own where a process would write generated keys."""
    env = {name: value for name, value in os.environ.items() if name not in ("SECRET_KEY", "CREDENTIALS_KEY")}
    return {**env, "INSTANCE_PATH": str(tmp_path / "instance"), "WEB_BIND": "127.0.0.1:0", "WEB_CONCURRENCY": "1"}


@pytest.mark.parametrize("process", sorted(START_COMMANDS))
def test_a_process_on_a_shared_database_without_the_keys_refuses_to_start_and_says_how_to_make_them(
    app, tmp_path, process
):
    started = subprocess.Popen(
        START_COMMANDS[process],
        cwd=PROJECT_ROOT,
        env=_without_keys(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        output, errors = started.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        started.kill()
        output, errors = started.communicate()
        pytest.fail(f"the {process} started without SECRET_KEY and CREDENTIALS_KEY:\n{output}\n{errors}")

    assert started.returncode == 1
    assert "SECRET_KEY and CREDENTIALS_KEY are not set" in errors
    assert "python -c 'import secrets; print(secrets.token_urlsafe(32))'" in errors
    assert "Traceback" not in errors
    assert not (tmp_path / "instance" / "secret_key").exists()
    assert not (tmp_path / "instance" / "credentials_key").exists()


def _s3_destination(workspace, ciphertext: str) -> ExportDestination:
    bucket = f"bucket-{uuid.uuid4().hex[:12]}"
    return factories.make_destination(
        workspace,
        kind="s3",
        bucket=bucket,
        region="us-east-1",
        access_key_id="AKIAEXAMPLE",
        secret_ciphertext=ciphertext,
        connection_key=f"s3:https://s3.example.com/{bucket}",
    )


@ROTATING
def test_a_secret_stored_under_an_older_key_is_read_with_the_new_key_first(app_context):
    stored = encrypt_secret("secret-saved-last-summer", key=OLD_KEY)

    assert decrypt_secret(stored) == "secret-saved-last-summer"


@ROTATING
def test_a_secret_saved_now_is_encrypted_with_the_first_key(app_context):
    saved = encrypt_secret("secret-saved-today")

    assert decrypt_secret(saved, key=NEW_KEY) == "secret-saved-today"


def _rotate() -> subprocess.CompletedProcess:
    return subprocess.run(ROTATE_COMMAND, cwd=PROJECT_ROOT, env=dict(os.environ), capture_output=True, text=True)


@ROTATING
def test_rotate_re_encrypts_every_stored_secret_with_the_first_key(app_context):
    workspace = factories.make_workspace()
    old = _s3_destination(workspace, encrypt_secret("under-the-old-key", key=OLD_KEY))
    new = _s3_destination(workspace, encrypt_secret("under-the-new-key", key=NEW_KEY))

    rotated = _rotate()

    assert rotated.returncode == 0, rotated.stderr
    assert "2 stored secret(s) re-encrypted with the first key of CREDENTIALS_KEY." in rotated.stdout
    db.session.expire_all()
    assert decrypt_secret(db.session.get(ExportDestination, old.id).secret_ciphertext, key=NEW_KEY) == (
        "under-the-old-key"
    )
    assert decrypt_secret(db.session.get(ExportDestination, new.id).secret_ciphertext, key=NEW_KEY) == (
        "under-the-new-key"
    )


@ROTATING
def test_rotate_names_a_secret_no_key_reads_and_leaves_it_as_it_was(app_context):
    workspace = factories.make_workspace()
    foreign = encrypt_secret("under-a-key-nobody-kept", key="a-key-long-gone")
    lost = _s3_destination(workspace, foreign)

    rotated = _rotate()

    assert rotated.returncode == 1
    assert f"No key of CREDENTIALS_KEY reads the secret of destination(s) {lost.id}" in rotated.stderr
    assert "under-a-key-nobody-kept" not in rotated.stdout + rotated.stderr
    db.session.expire_all()
    assert db.session.get(ExportDestination, lost.id).secret_ciphertext == foreign
    with pytest.raises(CredentialsUnreadable):
        decrypt_secret(foreign)
