from flask import render_template

from app.blueprints.activity import bp
from app.blueprints.guards import workspace_administrator
from app.services.workspace import activity_charts


@bp.get("/")
@workspace_administrator
def index(workspace_id: int):
    """The workspace's activity in charts with their tables, for its administrators."""
    packages = activity_charts.package_history(workspace_id)
    return render_template(
        "activity/index.html",
        files=activity_charts.files_per_day(workspace_id),
        runs=activity_charts.runs_per_day(workspace_id),
        packages=packages,
        packages_chart=activity_charts.packages_chart(packages),
    )
