"""The settings page offers Parquet beside CSV and JSON Lines, and an execution takes it."""

from __future__ import annotations

from app.extensions import db
from app.models.export_settings import ExportSettings
from app.services.workspace_export.execution_admission import admit
from tests.integration.export_settings.forms import settings_form, settings_url


def test_the_settings_page_offers_parquet(client, auth, world):
    auth.login(world.admin.email)

    page = client.get(settings_url(world.workspace)).get_data(as_text=True)

    assert 'value="parquet"' in page and "Parquet, typed columns, zstd-compressed" in page


def test_an_administrator_chooses_parquet_and_the_next_execution_carries_it(client, auth, world):
    auth.login(world.admin.email)

    response = client.post(settings_url(world.workspace), data=settings_form(format="parquet"))

    assert response.status_code == 302
    saved = db.session.query(ExportSettings).filter_by(workspace_id=world.workspace.id).one()
    assert saved.format == "parquet"
    execution = admit(world.workspace.id, world.admin, "manual")
    assert execution.settings_snapshot["format"] == "parquet"
