"""One workspace's datasets read inside one consistent snapshot, for a workspace-export package.

On PostgreSQL the snapshot is a dedicated connection in a `REPEATABLE READ READ ONLY`
transaction: its first query fixes the snapshot, and every count and row read afterwards sees
the database as it was then; rows committed later are absent however long the package takes.
The cutoff reported is `clock_timestamp()` read by that first query, just after the snapshot was
taken: everything committed before the cutoff is in the package (a commit in the instant
between the snapshot and the clock reading is the only thing a reader could miss). On SQLite
(`make run`) the connection holds one read transaction, which gives the same guarantee.

A package is a whole workspace: rows are scoped by workspace id only (no team scope), with every
catalog column, in id order, streamed so memory stays flat: typed rows through a server-side
cursor (`batches`), or, on PostgreSQL, CSV records straight from `COPY … TO STDOUT` inside the
same snapshot (`csv_record_batches`), each cell formatted by the database exactly as the package's CSV
encoder formats it in Python (app/rendering/package/encoders.py; a test holds the two equal):
numbers bare in their exact text, NULL an empty unquoted field, every other value quoted
(FORCE_QUOTE; COPY quotes an empty text anyway), dates YYYY-MM-DD, time stamps
`YYYY-MM-DDTHH:MI:SS.ffffff+00:00` in UTC, booleans `true` / `false`. COPY is several times
faster than formatting millions of rows in Python (bench/README.md, "packages"). For Parquet,
typed Arrow batches from the database's binary COPY (`arrow_batches`), read by a second
connection that imports the snapshot (`pg_export_snapshot`), so it sees the same rows.
Only datasets whose coverage declaration (app/domain/workspace_export/coverage.py) is active may be read.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Integer,
    Numeric,
    Row,
    SmallInteger,
    Text,
    case,
    cast,
    func,
    literal,
    select,
)

from app.data.copy_out import copy_batches
from app.domain.errors import Conflict
from app.domain.sources.catalog import DATASETS, Dataset
from app.domain.workspace_export.column_shape import ColumnShape
from app.domain.workspace_export.coverage import DECLARATIONS, CoverageDeclaration, CoverageStatus
from app.extensions import db

if TYPE_CHECKING:
    import pyarrow as pa

DEFAULT_BATCH_SIZE = 5000
# What the ADBC driver gathers before it hands over an Arrow batch (its default is 16 MiB). Two
# are held at once (one read ahead): at 5,000,000 rows 1 MiB peaked at 200-204 MB, 2 MiB at
# 204-208 MB about 5 % sooner, 4 MiB at 213-218 MB, past the 215 MB issue 31 allows.
ARROW_BATCH_BYTES = 2 << 20
# What pg_export_snapshot() returns: hexadecimal groups joined by hyphens.
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+(-[0-9A-F]+)+")
# Set in the snapshot's transaction on PostgreSQL: time stamps reach Python (and COPY's to_char)
# in UTC and dates print as YYYY-MM-DD, whatever the server's defaults; SET takes no snapshot.
# Parallel workers would take CPU from the database that serves the pages for no gain in time
# (app/data/csv_copy.py).
SESSION_SETTINGS = (
    "SET LOCAL timezone = 'UTC'",
    "SET LOCAL datestyle = 'ISO, YMD'",
    "SET LOCAL max_parallel_workers_per_gather = 0",
)


class DatasetNotCovered(Conflict):
    """A dataset the coverage registry does not declare active cannot be packaged."""


@dataclass(frozen=True)
class PackagedDataset:
    """A dataset as a package carries it: its declaration (schema version, content hash, columns)."""

    dataset: Dataset
    declaration: CoverageDeclaration

    @property
    def name(self) -> str:
        return self.dataset.name

    @property
    def column_names(self) -> list[str]:
        return [name for name, _ in self.declaration.columns]

    @property
    def column_types(self) -> list[str]:
        return [type_ for _, type_ in self.declaration.columns]

    @property
    def column_shapes(self) -> list[ColumnShape]:
        """Each declared column with the integer width or decimal precision its table gives it."""
        return [_shape(self.dataset.table.c[name].type, name, type_) for name, type_ in self.declaration.columns]


_INTEGER_BITS = ((BigInteger, 64), (SmallInteger, 16), (Integer, 32))  # subclasses before Integer


def _shape(sql_type, name: str, type_: str) -> ColumnShape:
    if type_ == "integer":
        bits = next((bits for kind, bits in _INTEGER_BITS if isinstance(sql_type, kind)), None)
        if bits is None:
            raise ValueError(f"column {name!r} is declared an integer but its table stores {sql_type!r}")
        return ColumnShape(name, type_, bits=bits)
    if type_ == "decimal":
        if not isinstance(sql_type, Numeric) or sql_type.precision is None or sql_type.scale is None:
            raise ValueError(f"decimal column {name!r} needs a declared precision and scale, not {sql_type!r}")
        return ColumnShape(name, type_, precision=sql_type.precision, scale=sql_type.scale)
    return ColumnShape(name, type_)


def packaged_datasets(names: Sequence[str]) -> list[PackagedDataset]:
    """The datasets `names` chooses, or DatasetNotCovered naming each one that may not be packaged."""
    declarations = {declaration.dataset: declaration for declaration in DECLARATIONS}
    chosen, refused = [], []
    for name in names:
        declaration = declarations.get(name)
        dataset = DATASETS.get(name)
        if declaration is None or dataset is None or declaration.status != CoverageStatus.ACTIVE:
            status = declaration.status if declaration is not None else "not declared"
            refused.append(f"{name!r} ({status})")
        else:
            chosen.append(PackagedDataset(dataset, declaration))
    if refused:
        raise DatasetNotCovered(
            "These datasets are not covered for workspace export (only active datasets of the coverage "
            f"registry can be packaged): {', '.join(refused)}."
        )
    return chosen


class PackageSnapshot:
    """Counts and rows of one workspace as of `cutoff_at`, from one open transaction."""

    def __init__(self, connection: Connection, workspace_id: int, cutoff_at: datetime):
        self._connection = connection
        self.workspace_id = workspace_id
        self.cutoff_at = cutoff_at
        self._exported_snapshot: str | None = None

    def _scoped(self, dataset: PackagedDataset, *columns):
        table = dataset.dataset.table
        return select(*columns).select_from(table).where(table.c.workspace_id == self.workspace_id)

    def count(self, dataset: PackagedDataset) -> int:
        return self._connection.execute(self._scoped(dataset, func.count())).scalar_one()

    @property
    def can_copy(self) -> bool:
        """Whether `csv_record_batches` and `arrow_batches` are available (PostgreSQL)."""
        return self._connection.dialect.name == "postgresql"

    def csv_copy(self, dataset: PackagedDataset) -> tuple[str, dict]:
        """The COPY statement `csv_record_batches` runs for the dataset, and the values psycopg binds into
        it (COPY takes no server-side parameters: psycopg binds them client-side as quoted literals)."""
        table = dataset.dataset.table
        cells = [_csv_cell(table.c[name], name, type_) for name, type_ in dataset.declaration.columns]
        statement = self._scoped(dataset, *cells).order_by(table.c.id)
        compiled = statement.compile(dialect=self._connection.dialect, compile_kwargs={"render_postcompile": True})
        preparer = self._connection.dialect.identifier_preparer
        quoted = [preparer.quote(name) for name, type_ in dataset.declaration.columns if type_ not in _BARE_TYPES]
        force_quote = f", FORCE_QUOTE ({', '.join(quoted)})" if quoted else ""
        return f"COPY ({compiled.string}) TO STDOUT WITH (FORMAT csv{force_quote})", compiled.params

    def csv_record_batches(
        self, dataset: PackagedDataset, rows_per_batch: int
    ) -> Generator[list[memoryview], None, None]:
        """The dataset's rows as CSV records (each ending with `\\n`, no header), in id order, from
        COPY in this snapshot, `rows_per_batch` at a time (app/data/copy_out.py)."""
        sql, params = self.csv_copy(dataset)
        driver = self._connection.connection.driver_connection
        if driver is None:
            raise RuntimeError("the snapshot's database connection is closed")
        with driver.cursor() as cursor:
            yield from copy_batches(cursor, sql, params, rows_per_batch)

    def arrow_batches(self, dataset: PackagedDataset) -> Generator[pa.RecordBatch, None, None]:
        """The dataset's rows (every declared column, in id order) as Arrow record batches of about
        ARROW_BATCH_BYTES each, on PostgreSQL: typed by the database's binary COPY and converted in
        native code (the ADBC driver), read by a connection of their own that imports this
        snapshot, so they are exactly the rows `csv_record_batches` and `count` see. A decimal arrives as
        its exact text, for the reader to type. Several times cheaper than CSV records parsed by pyarrow,
        for the database too (bench/README.md, "After issue 31"). The snapshot is exported at the
        call; the driver's connection opens when the first batch is asked for."""
        if self._exported_snapshot is None:
            exported = self._connection.exec_driver_sql("SELECT pg_export_snapshot()").scalar_one()
            if not _SNAPSHOT_ID.fullmatch(exported):
                raise RuntimeError(f"unexpected snapshot id {exported!r}")
            self._exported_snapshot = exported
        table = dataset.dataset.table
        # A decimal as its exact text: the driver's own conversion of PostgreSQL's binary numeric
        # to text took a third of its time (1.4 of 4.6 CPU seconds at 3,750,000 rows).
        columns = [
            cast(table.c[name], Text).label(name) if type_ == "decimal" else table.c[name]
            for name, type_ in dataset.declaration.columns
        ]
        statement = (
            self._scoped(dataset, *columns)
            .order_by(table.c.id)
            .compile(dialect=self._connection.dialect, compile_kwargs={"literal_binds": True})
        )
        url = self._connection.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        return _arrow_batches(url, self._exported_snapshot, statement.string)

    def batches(
        self, dataset: PackagedDataset, batch_size: int = DEFAULT_BATCH_SIZE
    ) -> Generator[Sequence[Row], None, None]:
        """The dataset's rows (every declared column, in id order), `batch_size` at a time."""
        table = dataset.dataset.table
        statement = self._scoped(dataset, *(table.c[name] for name in dataset.column_names)).order_by(table.c.id)
        result = self._connection.execute(
            statement, execution_options={"stream_results": True, "yield_per": batch_size}
        )
        try:
            yield from result.partitions()
        finally:
            result.close()


def _arrow_batches(url: str, snapshot_id: str, sql: str) -> Generator[pa.RecordBatch, None, None]:
    """The batches of `sql`, run in the exported snapshot `snapshot_id` of the database at `url`."""
    # Imported here: pyarrow and the driver cost a process about 50 MB a CSV package has no use
    # for. The driver manager's low-level API: its DB-API module loads pandas where installed.
    import adbc_driver_manager
    import adbc_driver_postgresql
    import pyarrow as pa

    with (
        contextlib.closing(adbc_driver_postgresql.connect(url)) as database,
        contextlib.closing(adbc_driver_manager.AdbcConnection(database)) as connection,
        contextlib.closing(adbc_driver_manager.AdbcStatement(connection)) as statement,
    ):
        for command in (
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            f"SET TRANSACTION SNAPSHOT '{snapshot_id}'",
            *SESSION_SETTINGS,
        ):
            statement.set_sql_query(command)
            statement.execute_update()
        statement.set_options(**{"adbc.postgresql.batch_size_hint_bytes": str(ARROW_BATCH_BYTES)})
        statement.set_sql_query(sql)
        stream, _ = statement.execute_query()
        yield from pa.RecordBatchReader.from_stream(stream)


_BARE_TYPES = ("integer", "decimal")


def _csv_cell(column, name: str, type_: str):
    """The CSV text of one cell as SQL, labelled with the column's name; NULL stays NULL. Texts,
    numbers and dates go to COPY as they are: its output of each is already the package's (a
    date under the snapshot's ISO date style), and a cast to text would cost the database a tenth
    of its time on the COPY for the same bytes (bench/README.md, "After issue 31")."""
    text: ColumnElement
    if type_ == "datetime":
        text = func.to_char(column, literal('YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"', Text))
    elif type_ == "boolean":
        text = case((column.is_(True), "true"), (column.is_(False), "false"))
    elif type_ in ("text", "integer", "decimal", "date"):
        text = column
    else:
        raise ValueError(f"unknown column type {type_!r}")
    return text.label(name)


@contextmanager
def open_snapshot(workspace_id: int) -> Iterator[PackageSnapshot]:
    """A snapshot of the workspace's datasets, valid until the block ends (its transaction closes)."""
    with db.engine.connect() as base:
        if base.dialect.name == "postgresql":
            connection = base.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            for setting in SESSION_SETTINGS:
                connection.exec_driver_sql(setting)
            cutoff_at = connection.execute(select(func.clock_timestamp())).scalar_one()
        else:
            # pysqlite begins transactions only before writes; a read transaction is begun by hand
            # and its snapshot fixed by the first read.
            connection = base.execution_options(isolation_level="AUTOCOMMIT")
            connection.exec_driver_sql("BEGIN")
            connection.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar_one()
            cutoff_at = datetime.now(UTC)
        try:
            yield PackageSnapshot(connection, workspace_id, cutoff_at.astimezone(UTC))
        finally:
            if connection.dialect.name == "sqlite":
                connection.exec_driver_sql("ROLLBACK")
            else:
                connection.rollback()
