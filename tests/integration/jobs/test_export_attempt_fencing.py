"""Two live attempts on one file: whatever order they finish in, the row describes the stored bytes.

A redelivered file restarts into its fixed key while the earlier attempt may still be alive.
Here the earlier attempt runs the real runner in a thread of this process, through the
configured storage wrapped so that its upload stops at a gate the test opens; the newer
attempt is a real worker process, or a second thread when both must stop at gates.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Iterator

import pytest

from app.domain.files import export_file
from app.models import ExportFile
from app.models.export_file import FailureCode, FileStatus
from app.services.files import export_runner
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.storage import MultipartUpload, Storage, get_storage
from app.storage.filesystem import FilesystemStorage
from tests.fixtures.apps import configuring_fixture
from tests.fixtures.workers import file_row, holder_frozen, let_the_lease_lapse, pending_uploads, wait_for

GATE_TIMEOUT = 60


class Gate:
    """A pause point: the attempt reports reaching it, then waits until the test opens it."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self._opened = threading.Event()

    def pass_through(self) -> None:
        self.reached.set()
        assert self._opened.wait(GATE_TIMEOUT), "the test never opened the gate"

    def wait_reached(self) -> None:
        assert self.reached.wait(GATE_TIMEOUT), "the attempt never reached its gate"

    def open(self) -> None:
        self._opened.set()


class GatedUpload(MultipartUpload):
    def __init__(self, inner: MultipartUpload, before_complete: Gate | None, after_complete: Gate | None):
        self.key, self.upload_id = inner.key, inner.upload_id
        self._inner = inner
        self._before_complete = before_complete
        self._after_complete = after_complete

    def upload_part(self, data: bytes) -> None:
        self._inner.upload_part(data)

    def complete(self) -> int:
        if self._before_complete:
            self._before_complete.pass_through()
        size = self._inner.complete()
        if self._after_complete:
            self._after_complete.pass_through()
        return size

    def abort(self) -> None:
        self._inner.abort()


class GatedStorage(Storage):
    """The real configured storage; uploads begun by a thread with gates stop at them."""

    def __init__(self, inner: Storage):
        self._inner = inner
        self.part_size = inner.part_size
        self._gates: dict[int, tuple[Gate | None, Gate | None]] = {}

    def gate_this_thread(self, before_complete: Gate | None = None, after_complete: Gate | None = None) -> None:
        self._gates[threading.get_ident()] = (before_complete, after_complete)

    def open_every_gate(self) -> None:
        for gates in self._gates.values():
            for gate in gates:
                if gate is not None:
                    gate.open()

    def begin_upload(self, key: str) -> MultipartUpload:
        upload = self._inner.begin_upload(key)
        before, after = self._gates.get(threading.get_ident(), (None, None))
        return GatedUpload(upload, before, after)

    def abort_uploads(self, key: str) -> int:
        return self._inner.abort_uploads(key)

    def put_bytes(self, key: str, data: bytes) -> None:
        self._inner.put_bytes(key, data)

    def read_chunks(self, key: str, chunk_size: int = 256 * 1024) -> Iterator[bytes]:
        return self._inner.read_chunks(key, chunk_size)

    def size(self, key: str) -> int:
        return self._inner.size(key)

    def exists(self, key: str) -> bool:
        return self._inner.exists(key)

    def delete(self, key: str) -> None:
        self._inner.delete(key)

    def list_keys(self, prefix: str) -> list[str]:
        return self._inner.list_keys(prefix)

    def check(self) -> None:
        self._inner.check()

    def download_url(self, key: str, file_name: str, content_type: str, expires_in: int) -> str | None:
        return self._inner.download_url(key, file_name, content_type, expires_in)


class Attempt:
    """One run of the real runner for a file, in a thread with its own app context."""

    def __init__(self, app, storage: GatedStorage, export_id: int, **gates: Gate):
        self.outcome: str | None = None
        self._error: BaseException | None = None

        def run() -> None:
            storage.gate_this_thread(**gates)
            try:
                with app.app_context():
                    self.outcome = export_runner.run_export_file(export_id)
            except BaseException as exc:  # shown by finish(), in the test's thread
                self._error = exc

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def finish(self) -> str:
        self._thread.join(GATE_TIMEOUT)
        assert not self._thread.is_alive(), "the attempt did not finish"
        if self._error is not None:
            raise self._error
        assert self.outcome is not None
        return self.outcome


@configuring_fixture(lambda variables: variables, params=["filesystem", "s3"])
def production_backend(request) -> dict[str, str]:
    """Each backend in turn, by the variables that choose it: the test settings' folder, then moto's bucket."""
    if request.param == "filesystem":
        return {}
    endpoint, bucket = request.getfixturevalue("s3_bucket")
    return {"STORAGE_URL": f"s3://{bucket}/exports", "S3_ENDPOINT_URL": endpoint}


@pytest.fixture
def production_storage(request, app, production_backend) -> Storage:
    """The storage this process and the workers it starts produce files into, empty."""
    if not production_backend:
        return request.getfixturevalue("isolated_storage")
    with app.app_context():
        return get_storage()


@pytest.fixture
def gated_storage(production_storage, monkeypatch) -> Iterator[GatedStorage]:
    gated = GatedStorage(production_storage)
    monkeypatch.setattr(export_runner, "get_storage", lambda: gated)
    yield gated
    gated.open_every_gate()  # a failed test leaves no attempt waiting


def _stored_data_rows(storage: Storage, key: str) -> int:
    """Rows in the stored CSV, not counting its heading row."""
    text = b"".join(storage.read_chunks(key)).decode("utf-8-sig")
    return len(list(csv.reader(io.StringIO(text)))) - 1


def _assert_row_describes_stored_bytes(storage: Storage, export_id: int, rows: int) -> None:
    produced = file_row(export_id)
    assert produced.status == FileStatus.SUCCEEDED, produced.failure_detail
    assert produced.row_count == rows
    assert storage.size(produced.storage_key) == produced.size_bytes
    assert _stored_data_rows(storage, produced.storage_key) == produced.row_count
    assert storage.list_keys("files/") == [produced.storage_key]
    if isinstance(storage, FilesystemStorage):
        assert pending_uploads(storage) == []


def test_stale_attempt_finishing_last_cannot_settle_over_the_newer_upload(
    app, export_scenario, gated_storage, production_storage, monkeypatch
):
    """Both uploads complete, the newer one last; the stale attempt then records first: it is refused."""
    export_scenario.add_timesheet_rows(5)
    export = export_scenario.request_file("csv")
    stale_published, newer_published = Gate(), Gate()

    with holder_frozen(monkeypatch):
        stale = Attempt(app, gated_storage, export.id, after_complete=stale_published)
        stale_published.wait_reached()  # 5 rows stored; the stale attempt has not recorded them yet
        let_the_lease_lapse(ExportFile, export.id)
        export_scenario.add_timesheet_rows(7)
        newer = Attempt(app, gated_storage, export.id, after_complete=newer_published)
        newer_published.wait_reached()  # 12 rows stored over them

    stale_published.open()
    assert stale.finish() == "superseded"
    assert file_row(export.id).status == FileStatus.RUNNING
    newer_published.open()
    assert newer.finish() == "succeeded"

    assert file_row(export.id).attempt_count == 2
    _assert_row_describes_stored_bytes(production_storage, export.id, rows=12)


def test_stale_attempt_cannot_complete_its_upload_over_a_newer_workers_file(
    app, export_scenario, gated_storage, production_storage, start_worker, monkeypatch
):
    """A stale attempt stopped just before completing its upload: a worker restarts and produces the file; the
    stale upload, aborted by the restart, can no longer replace the object."""
    export_scenario.add_timesheet_rows(5)
    export = export_scenario.request_file("csv")
    assert (
        dispatch_pending(FILES) == 1
    )  # the job a worker restarts the file with; this test runs the first attempt itself
    about_to_publish = Gate()
    with holder_frozen(monkeypatch):
        stale = Attempt(app, gated_storage, export.id, before_complete=about_to_publish)
        about_to_publish.wait_reached()
    let_the_lease_lapse(ExportFile, export.id)

    export_scenario.add_timesheet_rows(7)
    start_worker()
    wait_for(lambda: file_row(export.id).is_settled, timeout=60, what="the worker's attempt to settle the file")

    about_to_publish.open()
    assert stale.finish() == "superseded"

    assert file_row(export.id).attempt_count == 2
    _assert_row_describes_stored_bytes(production_storage, export.id, rows=12)


def test_stale_attempt_whose_file_failed_meanwhile_leaves_no_object(
    app, export_scenario, gated_storage, production_storage
):
    """The watchdog gives up on an attempt that then completes its upload: the object goes, the failure stays."""
    export_scenario.add_timesheet_rows(5)
    export = export_scenario.request_file("csv")
    published = Gate()
    attempt = Attempt(app, gated_storage, export.id, after_complete=published)
    published.wait_reached()

    export_file.fail(export.id, 1, FailureCode.TIMEOUT, "Given up by the watchdog.")
    published.open()
    assert attempt.finish() == "superseded"

    settled = file_row(export.id)
    assert (settled.status, settled.failure_code, settled.size_bytes) == (FileStatus.FAILED, "timeout", None)
    assert production_storage.list_keys("files/") == []
