"""The links a schedule's email carries are the public delivery pages' own routes."""

from __future__ import annotations

from app.services.schedules.schedule_delivery import delivery_paths


def test_the_download_and_unsubscribe_paths_reach_the_public_delivery_routes(app, app_context):
    download, unsubscribe = delivery_paths("a-nonce")
    routes = app.url_map.bind("localhost")
    assert routes.match(download, method="GET")[0] == "public_links.download"
    assert routes.match(unsubscribe, method="POST")[0] == "public_links.unsubscribe"
