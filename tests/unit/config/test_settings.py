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
