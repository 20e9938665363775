"""Percentiles of timings, one rule for every suite that reports them."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def percentile(values: Sequence[float], percent: int) -> float | None:
    """The `percent`th percentile, interpolated between the two nearest values (numpy's default);
    None when there is nothing to take it of."""
    if not values:
        return None
    if len(values) == 1:
        return float(values[0])
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]
