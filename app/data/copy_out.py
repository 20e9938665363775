"""A `COPY … TO STDOUT`'s rows gathered in batches by C calls alone, where Python's step per row is the cost.

psycopg hands over one row per `Copy.read()`, through a few Python frames each: at 5,000,000 rows
that was 5 to 6 CPU seconds, as much as the database spent making the rows, on a machine whose
two cores are all a package has (bench/README.md, "After issue 31"). Here the rows libpq has
already received are taken by `get_copy_data` calls chained in C (`iter`, `map`, `takewhile`,
`islice`), and the socket is waited on only when none is left; about half the CPU.

psycopg still starts the COPY (the statement, its values bound) and ends it when the caller
leaves early (it cancels the statement and reads what was already sent). The end of the data is
taken here, since libpq reports it only once: the final result is fetched, and an error in it
raised, as psycopg does.
"""

from __future__ import annotations

import functools
import operator
import selectors
from collections.abc import Generator, Mapping, Sequence
from itertools import chain, islice, takewhile
from typing import Any

import psycopg
from psycopg import errors
from psycopg.generators import fetch_many
from psycopg.pq import ExecStatus

_DATA = operator.itemgetter(1)
# What libpq's get_copy_data gives once the data has ended (0 and b"" mean no row buffered yet).
_DATA_ENDED = (-1, b"")
# Put after the last row, so a batch shows that the data ended; compared by identity.
_ENDED = memoryview(b"ended")


def copy_batches(
    cursor: psycopg.Cursor, sql: str, params: Sequence[Any] | Mapping[str, Any] | None, rows_per_batch: int
) -> Generator[list[memoryview], None, None]:
    """The rows of COPY statement `sql` (with `params` bound client-side by psycopg), each as the
    server sent it, in lists of `rows_per_batch` (the last may be shorter). A row stays valid as
    long as it is held. Close the generator (or exhaust it) to end the COPY."""
    with cursor.copy(sql, params) as copy, selectors.DefaultSelector() as selector:
        pgconn = copy.connection.pgconn
        selector.register(pgconn.socket, selectors.EVENT_READ)
        buffered_row = functools.partial(pgconn.get_copy_data, 1)
        batch: list[memoryview] = []
        while True:
            # The buffered rows, up to the first moment none is (a b"" that takewhile stops at)
            # or to the end (the sentinel of iter, then _ENDED).
            rows = takewhile(bool, chain(map(_DATA, iter(buffered_row, _DATA_ENDED)), (_ENDED,)))
            while more := list(islice(rows, rows_per_batch - len(batch))):
                batch += more
                if batch[-1] is _ENDED:
                    # The result first: the caller may stop at the last batch, and psycopg, which
                    # ends a COPY left early, cannot end one whose data libpq has reported ended.
                    _finish(copy.connection)
                    batch.pop()
                    if batch:
                        yield batch
                    return
                if len(batch) == rows_per_batch:
                    yield batch
                    batch = []
            selector.select()
            pgconn.consume_input()


def _finish(connection: psycopg.Connection) -> None:
    """Fetch the COPY's final result once its data has ended; raise the error it carries."""
    for result in connection.wait(fetch_many(connection.pgconn)):
        if result.status != ExecStatus.COMMAND_OK:
            raise errors.error_from_result(result, encoding=connection.info.encoding)
