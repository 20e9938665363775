"""PartBuffer: parts of exactly the part size, cut from writes of any length, from one buffer."""

from __future__ import annotations

import random

from app.storage import PartBuffer


def test_parts_are_cut_at_the_part_size_from_one_reused_buffer():
    """Every full part has the part size and the bytes written, in order; each is the same buffer
    (no copy), and the last part holds what is left."""
    data = random.Random(3).randbytes(5 * 100 + 37)
    sent: list[bytes] = []
    buffers: set[int] = set()

    def send(part: bytearray) -> None:
        sent.append(bytes(part))  # the contents as sent: the buffer is refilled afterwards
        buffers.add(id(part))

    parts = PartBuffer(100, send)
    for start in range(0, len(data), 70):
        parts.write(data[start : start + 70])
    assert [len(part) for part in sent] == [100] * 5
    assert len(buffers) == 1

    parts.close()
    assert [len(part) for part in sent] == [100] * 5 + [37]
    assert b"".join(sent) == data


def test_a_write_larger_than_several_parts_and_an_empty_close():
    sent: list[bytes] = []
    parts = PartBuffer(10, lambda part: sent.append(bytes(part)))
    parts.write(memoryview(b"x" * 30))
    parts.close()

    assert sent == [b"x" * 10] * 3
