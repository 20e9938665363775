"""Benchmarks for the export paths (`make bench`); not part of the test run. See bench/README.md."""
