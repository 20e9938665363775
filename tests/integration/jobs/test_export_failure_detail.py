"""What a person reads when a file fails unexpectedly: a sentence with the file's id, never SQL or parameters.

A query saved before NUL was refused (issue 8) still holds one in a text filter; its file makes
the database refuse the statement. The detail stored on the file and shown on its page is a
readable sentence naming the file as the reference; the statement and the error go to the log
with the file's id.
"""

from __future__ import annotations

import logging

from app.services.files.export_runner import run_export_file
from tests import factories
from tests.fixtures.workers import file_row

NUL_FILTER = {"column": "note", "op": "eq", "value": "before\x00after"}
LEAKS = ("SELECT", "[SQL", "psycopg", "NUL", "0x00", "parameters", "Traceback", "/", "\x00")


def test_an_unexpected_failure_shows_a_sentence_with_the_file_id_and_logs_the_error(
    client, auth, world, isolated_storage, caplog
):
    query = factories.make_query(world.workspace, world.member, filters=[NUL_FILTER])
    export = factories.make_export(query, world.member)

    with caplog.at_level(logging.ERROR, logger="app.services.files.export_runner"):
        assert run_export_file(export.id) == "internal"

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "internal")
    assert f"“file {export.id}”" in failed.failure_detail
    assert not [leak for leak in LEAKS if leak in failed.failure_detail]
    logged = [record for record in caplog.records if f"export file {export.id}:" in record.getMessage()]
    assert logged and "NUL" in str(logged[0].exc_info[1])

    auth.login(world.member.email)
    page = client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True)
    assert f"file {export.id}" in page
    assert "SELECT" not in page and "psycopg" not in page and "[SQL" not in page
