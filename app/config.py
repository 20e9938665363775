"""Settings, read from the environment with embedded defaults for one machine.

This is the one module that reads the environment (a test holds it so): `create_app` takes a
`Settings`, or reads one with `Settings.from_environment`, and everything else takes its values
from the app's. Every default points inside the instance folder, so `make run` needs nothing
else: a SQLite file, a storage directory and an email outbox folder, plus local Redis.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.communications.settings import MailSettings, parse_mail_settings
from app.destinations.endpoint_rule import parse_allowed_hosts


def _instance_secret(instance_path: Path, name: str) -> str:
    """A random secret kept in the instance folder, so restarts keep sessions valid."""
    path = instance_path / name
    if path.exists():
        return path.read_text().strip()
    instance_path.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(32)
    path.write_text(value)
    path.chmod(0o600)
    return value


class KeysRequired(ValueError):
    """Settings a process must not start with: outside the embedded SQLite default, every machine
    needs the same SECRET_KEY and CREDENTIALS_KEY, or each would generate keys of its own.

    Outside DomainError: an operator's setting, refused as the process starts, not a person's input."""


# How an operator makes a key (README "Adding machines").
MAKE_A_KEY = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


# Signs sessions and CSRF tokens; encrypts stored secrets. Every machine must hold the same two.
SHARED_KEYS = ("SECRET_KEY", "CREDENTIALS_KEY")


def _shared_keys(env: _Lookup, database_url: str, instance_path: Path) -> tuple[str, str]:
    """SECRET_KEY and CREDENTIALS_KEY; on the embedded SQLite default, a key kept in the instance
    folder for one not set (one machine: web, worker and scheduler share that folder). Any other
    database may be shared by several machines, whose keys must then be one: a key each would sign
    sessions another web machine refuses and encrypt secrets another worker cannot read."""
    values = {name: (env(name) or "").strip() for name in SHARED_KEYS}
    missing = [name for name, value in values.items() if not value]
    if missing and not database_url.startswith("sqlite"):
        raise KeysRequired(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set. With a database other "
            f"than the embedded SQLite file (DATABASE_URL), every machine needs the same SECRET_KEY and "
            f"CREDENTIALS_KEY; make each one with: {MAKE_A_KEY}"
        )
    secret_key, credentials_key = (
        value or _instance_secret(instance_path, name.lower()) for name, value in values.items()
    )
    return secret_key, credentials_key


def _credentials_keys(raw: str) -> tuple[str, ...]:
    """CREDENTIALS_KEY's keys, newest first: the first encrypts, any of them decrypts (rotation)."""
    keys = tuple(key.strip() for key in raw.split(",") if key.strip())
    if not keys:
        raise KeysRequired(f"CREDENTIALS_KEY names no key; make one with: {MAKE_A_KEY}")
    return keys


# Flask's own default: `instance/` beside the code.
_DEFAULT_INSTANCE_PATH = Path(__file__).resolve().parent.parent / "instance"

# A variable's value by its name: `get` of os.environ, or of the mapping a child process will get.
_Lookup = Callable[[str], str | None]


def _int(env: _Lookup, name: str, default: int) -> int:
    raw = env(name)
    return int(raw) if raw else default


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _bool(env: _Lookup, name: str, default: bool) -> bool:
    raw = (env(name) or "").strip().lower()
    if not raw:
        return default
    if raw not in _TRUE + _FALSE:
        raise ValueError(f"{name} must be one of {', '.join(_TRUE + _FALSE)}; it is {raw!r}")
    return raw in _TRUE


def _float(env: _Lookup, name: str, default: float) -> float:
    raw = env(name)
    return float(raw) if raw else default


# S3 signs a URL for at most seven days.
_PRESIGN_LIMIT_SECONDS = 7 * 24 * 3600


def _download_url_seconds(env: _Lookup) -> int:
    seconds = _int(env, "DOWNLOAD_URL_SECONDS", 300)
    if not 1 <= seconds <= _PRESIGN_LIMIT_SECONDS:
        raise ValueError(f"DOWNLOAD_URL_SECONDS must be between 1 and {_PRESIGN_LIMIT_SECONDS}; it is {seconds}")
    return seconds


@dataclass(frozen=True)
class Settings:
    """The settings this product reads; `as_flask_config` maps them onto Flask's config."""

    # The folder for the SQLite database, generated secrets and the default storage and outbox.
    instance_path: Path
    database_url: str
    redis_url: str
    storage_url: str
    # May hold an SMTP password, so it stays out of repr().
    mail_url: str = field(repr=False)
    # MAIL_URL, MAIL_FROM, MAIL_USERNAME, MAIL_PASSWORD and MAIL_TIMEOUT, parsed once.
    mail: MailSettings
    secret_key: str = field(repr=False)
    # CREDENTIALS_KEY, comma-separated, newest first: the first encrypts stored secrets, every one
    # decrypts them, so a new key goes first and the old ones follow until `credentials rotate` ran.
    credentials_keys: tuple[str, ...] = field(repr=False)
    export_queue: str
    file_retention_days: int
    storage_part_size: int
    # How long a download's presigned URL on S3 storage stays valid (directory storage sends the bytes itself).
    download_url_seconds: int
    # A running file's holder renews its lease every sixth of this; a lapsed lease means a dead holder.
    lease_seconds: int
    # An idle worker sends a heartbeat every this less 15 seconds (RQ's dequeue timeout), and registers
    # itself again then if Redis forgot it (a flush, a failover to an empty replica).
    worker_ttl_seconds: int
    export_job_timeout: int
    # Least time between two progress writes (the heartbeat) of a file in production.
    progress_interval_seconds: float
    max_preview_rows: int
    max_export_rows: int
    report_pdf_max_rows: int
    login_max_failures: int
    login_lockout_seconds: int
    # Cookies only over HTTPS; `flask serve-all` (the one-machine default over plain HTTP) turns it off.
    session_cookie_secure: bool
    # Requests with a larger body answer 413.
    max_request_bytes: int
    # Where people reach the console, for the absolute links in emails (no trailing slash).
    public_url: str
    # The web port of `flask serve-all`; the default public URL names it.
    port: int
    # Timesheet entries per demo workspace that `flask seed-demo` and `flask serve-all` make.
    seed_rows: int
    # S3 storage's endpoint (None: AWS itself) and region; boto3 reads the credentials itself.
    storage_endpoint_url: str | None
    storage_region: str
    # The directory that "directory" destinations are confined under; None refuses that kind.
    destinations_root: str | None = None
    # Hosts an S3 destination's endpoint may reach although they are on the server's own network
    # (loopback, private, link-local…); empty: public addresses only (app/destinations/endpoint_rule.py).
    destination_allowed_hosts: frozenset[str] = frozenset()
    # Rhythm's own AWS principal, which customers' roles trust (S3 destinations by role); None
    # refuses that way of signing. Its credentials come from the standard AWS chain.
    aws_delivery_principal_arn: str | None = None
    # STS's endpoint for assuming those roles (None: AWS's own); a test points it at moto.
    sts_endpoint_url: str | None = None
    # The bearer token /metrics asks for; without one /metrics answers 404. Kept out of repr().
    metrics_token: str | None = field(default=None, repr=False)
    # The folder every process of this machine writes its metrics to, which /metrics adds up
    # (prometheus-client reads the same variable itself); None: /metrics shows this process's own.
    metrics_directory: str | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings the variables of `environ` give: this process's environment by default, or
        the one a process it starts will have."""
        env = (os.environ if environ is None else environ).get
        configured_instance = env("INSTANCE_PATH")
        # INSTANCE_PATH gives a machine an instance folder of its own, outside a shared or read-only code folder.
        instance_path = Path(configured_instance).resolve() if configured_instance else _DEFAULT_INSTANCE_PATH
        port = _int(env, "PORT", 5000)
        mail_url = env("MAIL_URL") or (instance_path / "outbox").as_uri()
        database_url = env("DATABASE_URL") or f"sqlite:///{instance_path / 'rhythm.db'}"
        secret_key, credentials_key = _shared_keys(env, database_url, instance_path)
        return cls(
            instance_path=instance_path,
            database_url=database_url,
            redis_url=env("REDIS_URL") or "redis://127.0.0.1:6379/0",
            storage_url=env("STORAGE_URL") or (instance_path / "storage").as_uri(),
            mail_url=mail_url,
            mail=parse_mail_settings(
                mail_url,
                sender=env("MAIL_FROM") or "Rhythm Exports <exports@localhost>",
                username=env("MAIL_USERNAME") or None,
                password=env("MAIL_PASSWORD") or None,
                timeout_seconds=_float(env, "MAIL_TIMEOUT", 30.0),
            ),
            secret_key=secret_key,
            credentials_keys=_credentials_keys(credentials_key),
            export_queue=env("EXPORT_QUEUE") or "exports",
            file_retention_days=_int(env, "FILE_RETENTION_DAYS", 30),
            storage_part_size=_int(env, "STORAGE_PART_SIZE", 8 * 1024 * 1024),
            download_url_seconds=_download_url_seconds(env),
            lease_seconds=_int(env, "LEASE_SECONDS", 30),
            worker_ttl_seconds=_int(env, "WORKER_TTL_SECONDS", 60),
            export_job_timeout=_int(env, "EXPORT_JOB_TIMEOUT", 6 * 3600),
            progress_interval_seconds=_float(env, "PROGRESS_INTERVAL", 1.0),
            max_preview_rows=50,
            max_export_rows=_int(env, "MAX_EXPORT_ROWS", 1_048_575),
            # A PDF beyond this many rows fails with too_many_rows; XLSX has no such limit.
            report_pdf_max_rows=_int(env, "REPORT_PDF_MAX_ROWS", 50_000),
            login_max_failures=_int(env, "LOGIN_MAX_FAILURES", 5),
            login_lockout_seconds=_int(env, "LOGIN_LOCKOUT_SECONDS", 300),
            session_cookie_secure=_bool(env, "SESSION_COOKIE_SECURE", True),
            max_request_bytes=_int(env, "MAX_REQUEST_BYTES", 1024 * 1024),
            public_url=(env("PUBLIC_URL") or f"http://127.0.0.1:{port}").rstrip("/"),
            port=port,
            seed_rows=_int(env, "SEED_ROWS", 5000),
            storage_endpoint_url=env("S3_ENDPOINT_URL") or env("AWS_ENDPOINT_URL") or None,
            storage_region=env("AWS_DEFAULT_REGION") or "us-east-1",
            destinations_root=env("DESTINATIONS_ROOT") or None,
            destination_allowed_hosts=parse_allowed_hosts(env("DESTINATION_ALLOWED_HOSTS")),
            aws_delivery_principal_arn=env("AWS_DELIVERY_PRINCIPAL_ARN") or None,
            sts_endpoint_url=env("AWS_STS_ENDPOINT_URL") or None,
            metrics_token=env("METRICS_TOKEN") or None,
            metrics_directory=env("PROMETHEUS_MULTIPROC_DIR") or None,
        )

    def as_flask_config(self) -> dict[str, object]:
        config: dict[str, object] = {
            "SQLALCHEMY_DATABASE_URI": self.database_url,
            "SECRET_KEY": self.secret_key,
            "SESSION_COOKIE_HTTPONLY": True,
            "SESSION_COOKIE_SAMESITE": "Lax",
            "SESSION_COOKIE_SECURE": self.session_cookie_secure,
            "REMEMBER_COOKIE_HTTPONLY": True,
            "REMEMBER_COOKIE_SAMESITE": "Lax",
            "REMEMBER_COOKIE_SECURE": self.session_cookie_secure,
            "MAX_CONTENT_LENGTH": self.max_request_bytes,
            "WTF_CSRF_TIME_LIMIT": None,
            "SETTINGS": self,
        }
        if self.database_url.startswith("sqlite"):
            # Web, worker and scheduler share one SQLite file: wait for locks instead of failing.
            config["SQLALCHEMY_ENGINE_OPTIONS"] = {"connect_args": {"timeout": 30}}
        else:
            config["SQLALCHEMY_ENGINE_OPTIONS"] = {"pool_pre_ping": True}
        return config


def settings_of_this_process() -> Settings:
    """This process's settings, for a process starting (web, worker, scheduler, the CLI): settings
    it must not start with stop it with the sentence saying what to set, not a traceback."""
    try:
        return Settings.from_environment()
    except KeysRequired as refusal:
        raise SystemExit(str(refusal)) from None


def environment_for_children(defaults: Mapping[str, str], overrides: Mapping[str, str]) -> dict[str, str]:
    """The environment of a process this one starts: this one's, `defaults` for the variables it
    does not set, and `overrides` whatever it sets."""
    return {**defaults, **os.environ, **overrides}


def library_default(name: str, value: str) -> None:
    """Set `name` in this process's environment to `value` unless it is set already: for a library
    that reads a variable of its own once, as it is first imported, before this process imports it."""
    os.environ.setdefault(name, value)
