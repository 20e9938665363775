"""A storage whose disk is full: the file fails with `storage_full`, the person reads that the
storage is full and that a new request waits for space, and the staff console counts it among
what needs attention. The disk is real: a small tmpfs mounted for the test and filled up."""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

from app.services.files.export_runner import run_export_file
from tests import factories
from tests.fixtures.apps import configuring_fixture
from tests.fixtures.workers import file_row


@contextlib.contextmanager
def _full_disk(folder: Path) -> Iterator[Path]:
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], check=True)
    try:
        with contextlib.suppress(OSError), open(folder / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@configuring_fixture(lambda folder: {"STORAGE_URL": folder.as_uri()})
def storage_on_a_full_disk(tmp_path) -> Iterator[Path]:
    with _full_disk(tmp_path / "full-disk") as folder:
        yield folder


def test_a_file_that_finds_the_storage_full_says_so_and_staff_see_it(
    client, auth, world, storage_on_a_full_disk, caplog
):
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)

    with caplog.at_level(logging.ERROR, logger="app.services.files.export_runner"):
        assert run_export_file(export.id) == "storage_full"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "storage_full")
    assert "the file storage is full" in failed.failure_detail
    assert "once space has been freed" in failed.failure_detail
    assert any("No space left on device" in record.getMessage() for record in caplog.records)

    auth.login(world.member.email)
    page = client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True)
    assert "The file storage was full; request the file again once space has been freed." in page
    assert "No space left" not in page

    auth.logout()
    auth.login(factories.make_person(is_staff=True, staff_permissions=["staff.view"]).email)
    attention = client.get("/staff/").get_data(as_text=True)
    assert "Files that failed on a full storage in the last day" in attention
