"""Settings come from the environment, with embedded defaults inside the instance folder."""

import os
from pathlib import Path

import pytest

from app.config import KeysRequired, Settings, environment_for_children
from tests.fixtures.apps import settings_for

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def test_defaults_point_inside_the_instance_folder(tmp_path):
    """Without variables: SQLite, storage and outbox in the instance folder, local Redis."""
    settings = settings_for(tmp_path)
    assert settings.instance_path == tmp_path
    assert settings.database_url == f"sqlite:///{tmp_path / 'rhythm.db'}"
    assert settings.storage_url == (tmp_path / "storage").as_uri()
    assert settings.mail_url == (tmp_path / "outbox").as_uri()
    assert settings.redis_url == "redis://127.0.0.1:6379/0"


def test_generated_secret_key_survives_a_restart(tmp_path):
    """A secret made on first start is kept in the instance folder and read back next time."""
    first = settings_for(tmp_path).secret_key
    assert settings_for(tmp_path).secret_key == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_sqlite_gets_a_busy_timeout_so_processes_can_share_the_file(tmp_path):
    """On SQLite the engine waits for locks instead of failing at once."""
    config = settings_for(tmp_path).as_flask_config()
    assert config["SQLALCHEMY_ENGINE_OPTIONS"] == {"connect_args": {"timeout": 30}}


def test_postgresql_connections_are_checked_before_use(tmp_path):
    """On PostgreSQL a pooled connection the server dropped is replaced, not handed out."""
    config = settings_for(
        tmp_path, DATABASE_URL="postgresql+psycopg://postgres@127.0.0.1/x", SECRET_KEY="k", CREDENTIALS_KEY="k"
    ).as_flask_config()
    assert config["SQLALCHEMY_ENGINE_OPTIONS"] == {"pool_pre_ping": True}


def test_session_cookies_are_secure_unless_turned_off(tmp_path):
    """SESSION_COOKIE_SECURE defaults on; `false` turns it off for plain HTTP on one machine."""
    assert settings_for(tmp_path).as_flask_config()["SESSION_COOKIE_SECURE"] is True
    assert settings_for(tmp_path, SESSION_COOKIE_SECURE="false").as_flask_config()["SESSION_COOKIE_SECURE"] is False


def test_a_misspelt_session_cookie_secure_is_refused(tmp_path):
    """A value that is neither true nor false stops the start with the variable's name, not a guess."""
    with pytest.raises(ValueError, match="SESSION_COOKIE_SECURE"):
        settings_for(tmp_path, SESSION_COOKIE_SECURE="maybe")


def test_the_request_size_limit_is_read_from_the_environment(tmp_path):
    assert settings_for(tmp_path, MAX_REQUEST_BYTES="2048").as_flask_config()["MAX_CONTENT_LENGTH"] == 2048


def test_progress_interval_is_read_from_the_environment(tmp_path):
    """PROGRESS_INTERVAL sets the least time between progress writes; a second by default."""
    assert settings_for(tmp_path).progress_interval_seconds == 1.0
    assert settings_for(tmp_path, PROGRESS_INTERVAL="0").progress_interval_seconds == 0.0


def test_download_urls_last_five_minutes_unless_set(tmp_path):
    assert settings_for(tmp_path).download_url_seconds == 300
    assert settings_for(tmp_path, DOWNLOAD_URL_SECONDS="60").download_url_seconds == 60


def test_a_download_url_lifetime_s3_cannot_sign_is_refused(tmp_path):
    """S3 signs a URL for one second to seven days; anything else stops the start with the variable's name."""
    for seconds in ("0", str(7 * 24 * 3600 + 1)):
        with pytest.raises(ValueError, match="DOWNLOAD_URL_SECONDS"):
            settings_for(tmp_path, DOWNLOAD_URL_SECONDS=seconds)


def test_without_instance_path_the_instance_folder_is_beside_the_code():
    settings = Settings.from_environment({"SECRET_KEY": "k", "CREDENTIALS_KEY": "k"})
    assert settings.instance_path == PROJECT_ROOT / "instance"


def test_the_port_is_five_thousand_and_the_public_url_names_it_unless_set(tmp_path):
    assert (settings_for(tmp_path).port, settings_for(tmp_path).public_url) == (5000, "http://127.0.0.1:5000")
    moved = settings_for(tmp_path, PORT="8080")
    assert (moved.port, moved.public_url) == (8080, "http://127.0.0.1:8080")
    assert (
        settings_for(tmp_path, PORT="8080", PUBLIC_URL="https://exports.example/").public_url
        == "https://exports.example"
    )


def test_s3_storage_is_reached_at_s3_endpoint_url_first_then_aws_endpoint_url(tmp_path):
    """Neither set: AWS itself, in us-east-1 unless AWS_DEFAULT_REGION names another region."""
    assert (settings_for(tmp_path).storage_endpoint_url, settings_for(tmp_path).storage_region) == (None, "us-east-1")
    aws = settings_for(tmp_path, AWS_ENDPOINT_URL="http://aws.example", AWS_DEFAULT_REGION="eu-west-1")
    assert (aws.storage_endpoint_url, aws.storage_region) == ("http://aws.example", "eu-west-1")
    both = settings_for(tmp_path, AWS_ENDPOINT_URL="http://aws.example", S3_ENDPOINT_URL="http://minio.example")
    assert both.storage_endpoint_url == "http://minio.example"


def test_seed_rows_and_the_metrics_folder_are_read_from_the_environment(tmp_path):
    assert (settings_for(tmp_path).seed_rows, settings_for(tmp_path).metrics_directory) == (5000, None)
    given = settings_for(tmp_path, SEED_ROWS="300", PROMETHEUS_MULTIPROC_DIR="/run/metrics")
    assert (given.seed_rows, given.metrics_directory) == (300, "/run/metrics")


def test_a_started_process_gets_defaults_only_for_what_this_one_does_not_set(monkeypatch):
    """`flask serve-all`'s children: the embedded defaults fill gaps, and never hide a variable set here."""
    monkeypatch.setenv("DESTINATIONS_ROOT", "/srv/drops")
    monkeypatch.delenv("SESSION_COOKIE_SECURE", raising=False)
    monkeypatch.setenv("FLASK_APP", "elsewhere")
    children = environment_for_children(
        defaults={"DESTINATIONS_ROOT": "/instance/destinations", "SESSION_COOKIE_SECURE": "false"},
        overrides={"FLASK_APP": "wsgi"},
    )
    assert children["DESTINATIONS_ROOT"] == "/srv/drops"
    assert children["SESSION_COOKIE_SECURE"] == "false"
    assert children["FLASK_APP"] == "wsgi"
    assert children["PATH"] == os.environ["PATH"]


def test_a_shared_database_without_one_of_the_keys_names_it_and_writes_no_key_of_its_own(tmp_path):
    with pytest.raises(KeysRequired, match=r"^CREDENTIALS_KEY is not set\. .*secrets\.token_urlsafe"):
        settings_for(tmp_path, DATABASE_URL="postgresql+psycopg://postgres@127.0.0.1/x", SECRET_KEY="k")
    assert not (tmp_path / "secret_key").exists()


def test_credentials_key_lists_its_keys_newest_first(tmp_path):
    settings = settings_for(tmp_path, CREDENTIALS_KEY=" newest , older,oldest ")
    assert settings.credentials_keys == ("newest", "older", "oldest")
