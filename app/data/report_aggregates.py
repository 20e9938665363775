"""What report files and previews read besides their rows: rows per code of a coded report,
a summary report's figures and chart bars, the first rows of a preview, the workspace's date
format. Every read goes through the query runner's select, so it keeps the request's filters,
the workspace and the requester's row scope."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, func, select

from app.data.query_runner import build_select
from app.domain.people.access import RequesterContext
from app.domain.sources.print_params import Figure, SummarySpec
from app.domain.sources.stored_request import FileRequest
from app.extensions import db

MAX_CHART_BARS = 30


def _select_for_aggregates(request: FileRequest, access: RequesterContext) -> Select:
    """The request's rows as a subquery to aggregate; the order only matters under a row limit."""
    statement = build_select(request, access)
    return statement if request.row_limit is not None else statement.order_by(None)


def group_counts(request: FileRequest, access: RequesterContext, code_column: str) -> dict[Any, int]:
    """Rows per code, so each group's heading can give its count before its rows stream by."""
    rows = _select_for_aggregates(request, access).subquery()
    code = rows.c[code_column]
    return dict(db.session.execute(select(code, func.count()).select_from(rows).group_by(code)).tuples().all())


def first_rows(request: FileRequest, access: RequesterContext, limit: int) -> list[tuple]:
    """The request's first `limit` rows (fewer when its own row limit is lower)."""
    limited = replace(request, row_limit=min(request.row_limit or limit, limit))
    return list(db.session.execute(build_select(limited, access)).tuples().all())


@dataclass(frozen=True)
class SummaryFigures:
    """A summary report's numbers as the database gave them (averages to two decimals)."""

    rows: int
    figures: list[Any]  # one value per figure of the report, in its order
    bars: list[tuple[Any, Any]]  # (group value, first figure) per chart bar; empty without a group column
    group_count: int  # how many groups there are in all (the chart shows at most MAX_CHART_BARS)


def _figure_expression(rows, figure: Figure):
    if figure.function == "count":
        return func.count()
    return getattr(func, figure.function)(rows.c[figure.column])


def figure_value(figure: Figure, value: Any) -> Any:
    if figure.function == "avg" and value is not None:
        return Decimal(value).quantize(Decimal("0.01"))
    return value


def summary_figures(request: FileRequest, access: RequesterContext, summary: SummarySpec) -> SummaryFigures:
    """Headline figures over all the rows and, when the summary has a group column, the first
    figure per group: the largest MAX_CHART_BARS groups when there are more, else every group."""
    figures = summary.figures
    rows = _select_for_aggregates(request, access).subquery()
    overall = db.session.execute(
        select(func.count(), *[_figure_expression(rows, f) for f in figures]).select_from(rows)
    ).one()
    values = [figure_value(f, v) for f, v in zip(figures, overall[1:], strict=True)]
    group_name = summary.group_column
    if not group_name:
        return SummaryFigures(overall[0], values, [], 0)
    first = figures[0]
    expression = _figure_expression(rows, first)
    group = rows.c[group_name]
    group_count = db.session.execute(select(func.count(group.distinct())).select_from(rows)).scalar_one()
    ordering = (expression.desc(), group) if group_count > MAX_CHART_BARS else (group,)
    bars = db.session.execute(
        select(group, expression).select_from(rows).group_by(group).order_by(*ordering).limit(MAX_CHART_BARS)
    ).all()
    return SummaryFigures(overall[0], values, [(code, figure_value(first, value)) for code, value in bars], group_count)
