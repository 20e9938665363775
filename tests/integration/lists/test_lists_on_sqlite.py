"""The lists on SQLite, the embedded default of `make run`: literal search and keyset pages in every order."""

from __future__ import annotations

from datetime import timedelta

from app.domain.people.access import current_context
from app.extensions import db
from app.models.types import utcnow
from app.services.files import file_library
from app.services.files.file_library import FILE_LIST
from app.services.pages import list_pages
from tests import factories


def test_file_list_searches_and_pages_in_every_order_on_sqlite(sqlite_app, test_environment):
    application = sqlite_app()
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        person = factories.make_member(workspace).person
        query = factories.make_query(workspace, person)
        files = [
            factories.make_export(
                query, person, source_name=f"File {n:02d}", requested_at=utcnow() - timedelta(minutes=n)
            )
            for n in range(30)
        ]
        literal = factories.make_export(query, person, source_name="50%_done")
        access = current_context(workspace.id, person.id)

        def walk(**args) -> list[int]:
            seen, cursor = [], None
            while True:
                request = list_pages.read_request(FILE_LIST, {**args, **({"after": cursor} if cursor else {})})
                page = file_library.page_files(access, request, utcnow())
                assert page.notices == ()
                seen.extend(export.id for export in page.rows)
                if page.next_cursor is None:
                    return seen
                cursor = page.next_cursor

        everything = {export.id for export in files} | {literal.id}
        for sort in ("newest", "oldest", "name"):
            walked = walk(sort=sort)
            assert len(walked) == 31 and set(walked) == everything, sort
        assert walk(sort="oldest") == [export.id for export in reversed(files)] + [literal.id]
        assert walk(q="%_") == [literal.id]
        db.session.remove()
