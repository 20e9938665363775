"""Reading ahead in a thread: the items in order, one at most waiting, failures raised where they
happened, and the reading thread stopped and its iterator closed when the caller leaves."""

from __future__ import annotations

import threading
import time

import pytest

from app.data.read_ahead import read_ahead


def test_every_item_arrives_in_order():
    assert list(read_ahead(iter(range(1000)), name="numbers", ahead=3)) == list(range(1000))


def test_the_items_are_read_in_the_thread_named_not_the_callers():
    readers = []

    def items():
        for number in range(3):
            readers.append(threading.current_thread().name)
            yield number

    assert list(read_ahead(items(), name="read numbers", ahead=1)) == [0, 1, 2]
    assert readers == ["read numbers"] * 3


@pytest.mark.parametrize("ahead", [1, 3])
def test_the_reader_is_at_most_the_items_asked_for_ahead_of_the_caller(ahead):
    read = []

    def items():
        for number in range(10):
            read.append(number)
            yield number

    reading = read_ahead(items(), name="numbers", ahead=ahead)
    assert next(reading) == 0
    time.sleep(0.3)  # time for the reader to run ahead as far as it may

    # the item handed over, `ahead` waiting in the hand-off, and one read and held until there is room
    assert read == list(range(ahead + 2))
    reading.close()


def test_a_failure_while_reading_reaches_the_caller_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise LookupError("the source broke")

    received = []
    with pytest.raises(LookupError, match="the source broke"):
        for item in read_ahead(items(), name="numbers", ahead=1):
            received.append(item)
    assert received == [1, 2]


def test_leaving_early_stops_the_reader_and_closes_the_iterator_in_its_thread():
    closed_in = []

    def items():
        try:
            number = 0
            while True:
                yield number
                number += 1
        finally:
            closed_in.append(threading.current_thread().name)

    ahead = read_ahead(items(), name="endless", ahead=1)
    assert [next(ahead) for _ in range(3)] == [0, 1, 2]
    ahead.close()

    assert closed_in == ["endless"]
    assert not any(thread.name == "endless" for thread in threading.enumerate())


def test_a_failure_in_the_callers_loop_stops_the_reader_too():
    closed = threading.Event()

    def items():
        try:
            yield from range(100)
        finally:
            closed.set()

    with pytest.raises(ZeroDivisionError):
        for item in read_ahead(items(), name="numbers", ahead=1):
            if item == 5:
                raise ZeroDivisionError
    assert closed.is_set()
