"""Settings come from the environment, with embedded defaults inside the instance folder."""

from app.config import Settings


def test_defaults_point_inside_the_instance_folder(tmp_path, monkeypatch):
    """Without variables: SQLite, storage and outbox in the instance folder, local Redis."""
    for name in ("DATABASE_URL", "REDIS_URL", "STORAGE_URL", "MAIL_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings.from_environment(tmp_path)
    assert settings.database_url == f"sqlite:///{tmp_path / 'rhythm.db'}"
    assert settings.storage_url == (tmp_path / "storage").as_uri()
    assert settings.mail_url == (tmp_path / "outbox").as_uri()
    assert settings.redis_url == "redis://127.0.0.1:6379/0"


def test_generated_secret_key_survives_a_restart(tmp_path, monkeypatch):
    """A secret made on first start is kept in the instance folder and read back next time."""
    monkeypatch.delenv("SECRET_KEY", raising=False)
    first = Settings.from_environment(tmp_path).secret_key
    assert Settings.from_environment(tmp_path).secret_key == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_sqlite_gets_a_busy_timeout_so_processes_can_share_the_file(tmp_path, monkeypatch):
    """On SQLite the engine waits for locks instead of failing at once."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    config = Settings.from_environment(tmp_path).as_flask_config()
    assert config["SQLALCHEMY_ENGINE_OPTIONS"] == {"connect_args": {"timeout": 30}}


def test_postgresql_connections_are_checked_before_use(tmp_path, monkeypatch):
    """On PostgreSQL a pooled connection the server dropped is replaced, not handed out."""
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1/x")
    config = Settings.from_environment(tmp_path).as_flask_config()
    assert config["SQLALCHEMY_ENGINE_OPTIONS"] == {"pool_pre_ping": True}


def test_session_cookies_are_secure_unless_turned_off(tmp_path, monkeypatch):
    """SESSION_COOKIE_SECURE defaults on; `false` turns it off for plain HTTP on one machine."""
    monkeypatch.delenv("SESSION_COOKIE_SECURE", raising=False)
    assert Settings.from_environment(tmp_path).as_flask_config()["SESSION_COOKIE_SECURE"] is True
    monkeypatch.setenv("SESSION_COOKIE_SECURE", "false")
    assert Settings.from_environment(tmp_path).as_flask_config()["SESSION_COOKIE_SECURE"] is False


def test_a_misspelt_session_cookie_secure_is_refused(tmp_path, monkeypatch):
    """A value that is neither true nor false stops the start with the variable's name, not a guess."""
    import pytest

    monkeypatch.setenv("SESSION_COOKIE_SECURE", "maybe")
    with pytest.raises(ValueError, match="SESSION_COOKIE_SECURE"):
        Settings.from_environment(tmp_path)


def test_the_request_size_limit_is_read_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MAX_REQUEST_BYTES", "2048")
    assert Settings.from_environment(tmp_path).as_flask_config()["MAX_CONTENT_LENGTH"] == 2048


def test_progress_interval_is_read_from_the_environment(tmp_path, monkeypatch):
    """PROGRESS_INTERVAL sets the least time between progress writes; a second by default."""
    monkeypatch.delenv("PROGRESS_INTERVAL", raising=False)
    assert Settings.from_environment(tmp_path).progress_interval_seconds == 1.0
    monkeypatch.setenv("PROGRESS_INTERVAL", "0")
    assert Settings.from_environment(tmp_path).progress_interval_seconds == 0.0


def test_download_urls_last_five_minutes_unless_set(tmp_path, monkeypatch):
    monkeypatch.delenv("DOWNLOAD_URL_SECONDS", raising=False)
    assert Settings.from_environment(tmp_path).download_url_seconds == 300
    monkeypatch.setenv("DOWNLOAD_URL_SECONDS", "60")
    assert Settings.from_environment(tmp_path).download_url_seconds == 60


def test_a_download_url_lifetime_s3_cannot_sign_is_refused(tmp_path, monkeypatch):
    """S3 signs a URL for one second to seven days; anything else stops the start with the variable's name."""
    import pytest

    for seconds in ("0", str(7 * 24 * 3600 + 1)):
        monkeypatch.setenv("DOWNLOAD_URL_SECONDS", seconds)
        with pytest.raises(ValueError, match="DOWNLOAD_URL_SECONDS"):
            Settings.from_environment(tmp_path)
