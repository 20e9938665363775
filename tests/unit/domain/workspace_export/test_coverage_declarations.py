"""The coverage declarations: content hashes that change exactly when the column list does."""

from __future__ import annotations

from app.domain.sources.catalog import DATASETS
from app.domain.workspace_export.coverage import DECLARATIONS, CoverageStatus, content_hash

COLUMNS = (("id", "integer"), ("name", "text"), ("created_at", "datetime"))


def test_content_hash_is_a_sha256_hex_digest_that_repeats_for_the_same_columns():
    digest = content_hash(COLUMNS)
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert content_hash(list(COLUMNS)) == digest


def test_content_hash_changes_with_a_renamed_column():
    renamed = (("id", "integer"), ("title", "text"), ("created_at", "datetime"))
    assert content_hash(renamed) != content_hash(COLUMNS)


def test_content_hash_changes_with_a_retyped_column():
    retyped = (("id", "text"), ("name", "text"), ("created_at", "datetime"))
    assert content_hash(retyped) != content_hash(COLUMNS)


def test_content_hash_changes_with_column_order_because_packages_write_columns_in_order():
    assert content_hash(tuple(reversed(COLUMNS))) != content_hash(COLUMNS)


def test_content_hash_cannot_be_confused_by_separators_inside_names():
    assert content_hash((("a,b", "text"),)) != content_hash((("a", "b,text"),))


def test_every_catalog_dataset_is_declared_once_with_its_schema_version_and_columns():
    declared = {d.dataset: d for d in DECLARATIONS}
    assert len(declared) == len(DECLARATIONS)
    assert set(declared) == set(DATASETS)
    for name, dataset in DATASETS.items():
        assert declared[name].schema_version == dataset.schema_version
        assert declared[name].columns == tuple((c.name, c.type) for c in dataset.columns)
        assert declared[name].table == dataset.table.name
        assert declared[name].status in CoverageStatus


def test_declared_columns_are_columns_of_the_dataset_table():
    for declaration in DECLARATIONS:
        table = DATASETS[declaration.dataset].table
        missing = [name for name, _type in declaration.columns if name not in table.c]
        assert missing == [], f"{declaration.dataset}: {missing} are not columns of {table.name}"
