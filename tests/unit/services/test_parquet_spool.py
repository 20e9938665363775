"""A Parquet package's spool writes the other datasets ahead while the largest is written."""

import itertools
import threading

import pytest

from app.data.package_snapshot import packaged_datasets
from app.rendering.package.volumes import VolumeResult
from app.services.workspace_export.parquet_spool import ParquetSpool, until_stopped

TEAMS, PEOPLE, SHIFTS = packaged_datasets(["teams", "people", "shifts"])


def _volume(dataset, sequence: int, data: bytes) -> VolumeResult:
    return VolumeResult(dataset.name, sequence, f"{dataset.name}-{sequence}", 1, len(data), "")


def _writing(contents: dict[str, list[bytes]], before=None):
    """A dataset's volumes as `contents` gives them, each written to its target and closed."""

    def write(dataset, open_volume, keep_going):
        if before is not None:
            before(dataset)
        volumes = []
        for sequence, data in enumerate(contents[dataset.name], start=1):
            target = open_volume(sequence)
            target.write(data)
            volumes.append(_volume(dataset, sequence, data))
            target.close(volumes[-1])
        return volumes

    return write


def test_each_dataset_is_spooled_in_order_into_its_volumes_files():
    contents = {"teams": [b"first", b"second"], "people": [b"only"]}
    with ParquetSpool([TEAMS, PEOPLE], _writing(contents)) as spool:
        teams, people = spool.take(TEAMS), spool.take(PEOPLE)

        assert [volume.sequence for volume in teams.volumes] == [1, 2]
        assert [file.read() for file in teams.files] == [b"first", b"second"]
        assert [file.read() for file in people.files] == [b"only"]


def test_no_dataset_is_taken_up_once_the_lead_is_written():
    started, release = threading.Event(), threading.Event()

    def before(dataset):
        started.set()
        release.wait(5)

    contents = {"teams": [b"t"], "people": [b"p"], "shifts": [b"s"]}
    with ParquetSpool([TEAMS, PEOPLE, SHIFTS], _writing(contents, before)) as spool:
        assert started.wait(5)
        spool.lead_finished()
        release.set()

        assert spool.take(TEAMS).files[0].read() == b"t"  # the one under way is finished
        assert spool.take(PEOPLE) is None
        assert spool.take(SHIFTS) is None


def test_a_failure_while_spooling_is_raised_where_its_dataset_is_taken_and_spooling_stops():
    def write(dataset, open_volume, keep_going):
        raise ValueError(f"cannot write {dataset.name}")

    with ParquetSpool([TEAMS, PEOPLE], write) as spool:
        with pytest.raises(ValueError, match="cannot write teams"):
            spool.take(TEAMS)
        assert spool.take(PEOPLE) is None


def test_leaving_the_spool_stops_the_dataset_being_written_and_closes_its_rows():
    reading, closed = threading.Event(), threading.Event()

    def endless_rows():
        try:
            for batch in itertools.count():
                reading.set()
                yield batch
        finally:
            closed.set()

    def write(dataset, open_volume, keep_going):
        rows = endless_rows()
        try:
            for _ in until_stopped(rows, keep_going):
                pass
        finally:
            rows.close()
        return []

    with ParquetSpool([TEAMS], write):
        assert reading.wait(5)

    assert closed.is_set()


def test_leaving_the_spool_frees_every_file_it_wrote():
    with ParquetSpool([TEAMS, PEOPLE], _writing({"teams": [b"t"], "people": [b"p1", b"p2"]})) as spool:
        files = spool.take(TEAMS).files + spool.take(PEOPLE).files

    assert all(file.closed for file in files)
