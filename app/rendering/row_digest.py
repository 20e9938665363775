"""The SHA-256 of a file's rows as its writer takes them, for "send only when the rows changed".

Fed while the rows stream to the writer, never from the file's bytes (an XLSX or PDF file carries
the moment it was made) and never by a second pass or a copy: each row is hashed on its way to the
writer and forgotten. The digest starts with the column list (names and types, in order), so
another column, or the same columns in another order, gives another digest.

Two feeds, one per kind of row a writer takes:

- `typed_rows`: rows of Python values; each row is hashed as the `repr` of its values with time
  stamps turned to UTC (a `repr` is unambiguous: text is quoted and escaped, a decimal keeps its
  scale, `1`, `True` and `"1"` differ), one row a line;
- `records`: records already formatted as the CSV file writes them (PostgreSQL's COPY), each ending
  with its terminator, hashed as they are.

A file is always fed one way, so two files of one schedule compare alike; the digest of a CSV file
is not meant to equal that of an XLSX file of the same rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import TypeVar

from app.domain.sources.catalog import Column

Row = TypeVar("Row", bound=Sequence)


class RowDigest:
    """One file's digest: pass its rows through `typed_rows` or `records`, then read `hexdigest()`."""

    def __init__(self, columns: Sequence[Column]):
        self._hash = hashlib.sha256(repr([(column.name, column.type) for column in columns]).encode() + b"\n")
        self._moments = [index for index, column in enumerate(columns) if column.type == "datetime"]

    def typed_rows(self, rows: Iterable[Row]) -> Iterator[Row]:
        """Each row of `rows`, unchanged, after hashing it."""
        update, moments = self._hash.update, self._moments
        for row in rows:
            values = tuple(row)
            if moments:
                shown = list(values)
                for index in moments:
                    if shown[index] is not None:
                        shown[index] = shown[index].astimezone(UTC)
                update(repr(tuple(shown)).encode() + b"\n")
            else:
                update(repr(values).encode() + b"\n")
            yield row

    def record_batches(self, batches: Iterable[Sequence[bytes | memoryview]]) -> Iterator[Sequence[bytes | memoryview]]:
        """Each batch of records of `batches`, unchanged, after hashing its records one after another
        (the digest of the records, however they are batched)."""
        update = self._hash.update
        for batch in batches:
            update(b"".join(batch))
            yield batch

    def add_figures(self, figures: Iterable[tuple[str, object]]) -> None:
        """Hash labelled figures (a summary report prints figures, not rows), one a line."""
        for figure in figures:
            self._hash.update(repr(tuple(figure)).encode() + b"\n")

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


@dataclass(frozen=True)
class WrittenRows:
    """What writing a file's rows gave: how many, and their digest (None for a file nobody compares)."""

    count: int
    digest: str | None
