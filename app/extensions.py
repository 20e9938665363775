"""The Flask extensions, created once and bound to the app in create_app()."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from flask_htmx import HTMX
from flask_login import LoginManager
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData, Table, TextClause, bindparam, event, func
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import CursorResult, Engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.sql.dml import Insert, UpdateBase
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.types import TypeEngine

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

    if TYPE_CHECKING:
        # SQLAlchemy types it as any FROM clause; every model here is declared on a Table.
        __table__: ClassVar[Table]


db = SQLAlchemy(model_class=Base)

# The base class of every model. Flask-SQLAlchemy builds db.Model at run time (Base plus its own
# mixins), so a type checker cannot see it as a class; to the checker it is the declarative Base.
if TYPE_CHECKING:
    Model = Base
else:
    Model = db.Model

login_manager = LoginManager()
csrf = CSRFProtect()
htmx = HTMX()


def execute_dml(statement: UpdateBase | TextClause, params: Mapping[str, Any] | None = None) -> CursorResult[Any]:
    """Run an INSERT, UPDATE or DELETE (or such a statement as text) in the session; its result
    tells how many rows it changed.

    Session.execute is typed to return a plain Result, which has no rowcount, whatever the
    statement; for a data-changing statement it is always a CursorResult, which has.
    """
    return cast(CursorResult[Any], db.session.execute(statement, params))


def insert_ignoring_duplicates(table: Table, unique_columns: Sequence[str] = ()) -> Insert:
    """INSERT … ON CONFLICT (unique_columns) DO NOTHING in the engine's own dialect, PostgreSQL
    (production, tests) or SQLite (the embedded default of `make run`). With no columns, a
    conflict on any unique index is ignored: the one spelling that covers a partial index in both."""
    dialect = postgresql if db.engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table).on_conflict_do_nothing(index_elements=list(unique_columns) or None)


def array_rows(name: str, **columns: tuple[TypeEngine[Any], Sequence[Any]]) -> TableValuedAlias:
    """A batch's values as the rows of a FROM clause named `name` (PostgreSQL's unnest of one array
    per column), for a statement that inserts or updates many rows at once.

    The statement's text is the same whatever the batch's size, so psycopg prepares it once; one
    bound parameter per value made a new text for every batch, 50 kB long, which psycopg parses
    anew each time (it caches no statement over 4 kB): a fifth of the ticker's time.
    """
    arrays = [
        bindparam(f"{name}_{column}", list(values), type_=postgresql.ARRAY(type_))
        for column, (type_, values) in columns.items()
    ]
    return func.unnest(*arrays).table_valued(*columns).render_derived(name=name)


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
