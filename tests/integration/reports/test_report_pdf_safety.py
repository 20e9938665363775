"""Report PDFs print hostile values as text and fetch nothing a value names, from the network or disk."""

from __future__ import annotations

import io
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pypdf import PdfReader

from app.services.files.export_runner import run_export_file
from tests import factories
from tests.fixtures.workers import file_row


def _png(path) -> None:
    """A valid one-pixel PNG: if the renderer loaded it, the PDF would hold an image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))


@pytest.fixture
def listening_server():
    """An HTTP server on localhost that records every request it gets."""
    requests: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802  (the name http.server calls)
            requests.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", requests
    server.shutdown()
    server.server_close()


def _hostile_report(kit, tmp_path, base_url: str):
    image = tmp_path / "pixel.png"
    _png(image)
    values = [
        *factories.hostile_values(),
        '<img src="file:///etc/passwd">',
        f'<img src="{image.as_uri()}">',
        f'<img src="{base_url}/from-a-cell.png">',
        f'<link rel="stylesheet" href="{base_url}/from-a-cell.css">',
        f"<style>@import url({base_url}/imported.css);</style>",
    ]
    employee = kit.world.employees[0]
    for value in values[-5:]:
        factories.make_timesheet_entry(employee, note=value, project=value[:200])
    report = kit.report(
        kind="coded",
        title=f'<img src="{base_url}/from-the-title.png"> Report & <b>title</b>',
        subtitle=f'<a href="{base_url}/link">subtitle</a>',
        code_descriptions={"Team A": f'<img src="{base_url}/from-a-description.png">'},
    )
    return report, values


def _pdf(kit, report, storage) -> bytes:
    export = kit.request(report, "pdf")
    assert run_export_file(export.id) == "succeeded", file_row(export.id).failure_detail
    return b"".join(storage.read_chunks(file_row(export.id).storage_key))


def test_markup_in_values_prints_as_text(kit, isolated_storage, read_pdf, tmp_path, listening_server):
    """Tags, entities and xhtml2pdf directives in the data, title and descriptions print literally."""
    base_url, _ = listening_server
    report, _ = _hostile_report(kit, tmp_path, base_url)
    raw = read_pdf(_pdf(kit, report, isolated_storage), "raw")
    text = "".join(raw.split())
    for value in (
        '<img src="file:///etc/passwd">',
        "<b>bold</b> & <i>italic</i>",
        "<pdf:nextpage />",
        "</td></tr></table>",
        "{{ 7*7 }}",
        f'<img src="{base_url}/from-the-title.png"> Report & <b>title</b>',
        f'<a href="{base_url}/link">subtitle</a>',
        f'<img src="{base_url}/from-a-description.png">',
    ):
        assert "".join(value.split()) in text, value


def test_nothing_named_by_a_value_is_fetched(kit, isolated_storage, tmp_path, listening_server):
    """No request reaches the server the values point at, and no image (a readable local PNG) is embedded."""
    base_url, requests = listening_server
    report, _ = _hostile_report(kit, tmp_path, base_url)
    pdf = PdfReader(io.BytesIO(_pdf(kit, report, isolated_storage)))
    assert requests == []
    assert all(not page.images for page in pdf.pages)


def test_a_pdf_directive_in_the_data_does_not_break_the_page(kit, isolated_storage, read_pdf, tmp_path):
    """`<pdf:nextpage />` in a cell is text: one more row adds at most the one page its height needs."""
    report = kit.report(kind="table")
    before = len(PdfReader(io.BytesIO(_pdf(kit, report, isolated_storage))).pages)
    factories.make_timesheet_entry(kit.world.employees[0], note="<pdf:nextpage /><pdf:nextpage />")
    data = _pdf(kit, report, isolated_storage)
    pages = len(PdfReader(io.BytesIO(data)).pages)
    assert pages <= before + 1
    text = read_pdf(data)
    assert f"Page {pages} of {pages}" in text and f"Page {pages + 1}" not in text
    assert "<pdf:nextpage/><pdf:nextpage/>" in "".join(text.split())
