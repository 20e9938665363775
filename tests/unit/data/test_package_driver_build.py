"""The PostgreSQL ADBC driver a Parquet package reads through is an optimised build.

Its Linux wheels from 1.9.0 to 1.13.0 were compiled without optimisation, which doubles the CPU a
package's reading thread spends decoding the COPY (requirements.in). Such a build keeps the
trivial accessors of the COPY reader as functions of their own, which an optimised build inlines:
their names in the library's symbol table tell the two apart.
"""

from importlib.resources import files

# std::unique_ptr<adbcpq::PostgresCopyFieldReader>::operator->() const, mangled.
UNINLINED_ACCESSOR = b"_ZNKSt10unique_ptrIN6adbcpq23PostgresCopyFieldReaderESt14default_deleteIS1_EEptEv"


def test_the_postgresql_driver_is_built_with_optimisation():
    library = files("adbc_driver_postgresql").joinpath("libadbc_driver_postgresql.so").read_bytes()

    assert b"PostgresCopyFieldReader" in library  # the COPY reader's symbols are there to judge by
    assert UNINLINED_ACCESSOR not in library
