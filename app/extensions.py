"""The Flask extensions, created once and bound to the app in create_app()."""

from flask_htmx import HTMX
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase

# Named constraints keep Alembic migrations identical on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


db = SQLAlchemy(model_class=Base)
migrate = Migrate()
login_manager = LoginManager()
csrf = CSRFProtect()
htmx = HTMX()


@event.listens_for(Engine, "connect")
def _sqlite_pragmas(dbapi_connection, _record) -> None:
    """WAL and a busy timeout let web, worker and scheduler share one SQLite file."""
    if type(dbapi_connection).__module__.startswith("sqlite3"):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()
        dbapi_connection.create_function("lower", 1, letter_lower, deterministic=True)


def letter_lower(text: object) -> object:
    """Text in lower case letter by letter, as PostgreSQL's lower() does; other values as they are.

    SQLite's built-in lower() changes only A to Z, so a case-insensitive filter on "École"
    would miss "ÉCOLE" there. Letter by letter, like PostgreSQL: "İ" becomes "i" (not Python's
    two-character "i̇") and a final "Σ" becomes "σ" whatever follows it.
    """
    if not isinstance(text, str):
        return text
    return "".join(letter.lower()[0] for letter in text)
