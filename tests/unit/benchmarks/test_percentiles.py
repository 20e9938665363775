"""Every suite's percentiles: interpolated between the nearest values, and defined for few values."""

from __future__ import annotations

import pytest

from bench.percentiles import percentile


def test_percentile_interpolates_between_the_nearest_values():
    assert percentile([10, 20, 30, 40, 50], 50) == 30
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)


def test_percentile_of_nothing_is_none_and_of_one_value_that_value():
    assert percentile([], 95) is None
    assert percentile([42.0], 95) == 42.0
