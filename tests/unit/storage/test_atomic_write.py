"""Writing a file whole (app/storage/atomic_write.py): the target's name holds the old content or
the whole new one, never a part, whatever stops the write."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from app.storage.atomic_write import write_atomically


def test_the_chunks_become_the_whole_file_and_no_temporary_is_left(tmp_path):
    target = tmp_path / "object.bin"

    size = write_atomically(target, iter([b"ab", b"", b"cde"]))

    assert (size, target.read_bytes()) == (5, b"abcde")
    assert [path.name for path in tmp_path.iterdir()] == ["object.bin"]


def test_a_new_file_replaces_the_old_one(tmp_path):
    target = tmp_path / "object.bin"
    target.write_bytes(b"old content, longer than the new")

    write_atomically(target, [b"new"])

    assert target.read_bytes() == b"new"


def test_while_the_bytes_are_written_the_target_still_holds_its_old_content(tmp_path):
    target = tmp_path / "object.bin"
    target.write_bytes(b"old")
    seen_midway = []

    def chunks():
        yield b"first part, "
        seen_midway.append(target.read_bytes())
        yield b"second part"

    write_atomically(target, chunks())

    assert seen_midway == [b"old"]
    assert target.read_bytes() == b"first part, second part"


@pytest.mark.parametrize("stop", [OSError("the source could not be read"), KeyboardInterrupt()], ids=repr)
def test_a_write_stopped_midway_keeps_the_old_content_and_leaves_no_temporary(tmp_path, stop):
    target = tmp_path / "object.bin"
    target.write_bytes(b"old")

    def chunks():
        yield b"partial"
        raise stop

    with pytest.raises(type(stop)):
        write_atomically(target, chunks())

    assert target.read_bytes() == b"old"
    assert [path.name for path in tmp_path.iterdir()] == ["object.bin"]


def test_a_stopped_write_of_a_new_file_leaves_nothing_at_its_name(tmp_path):
    target = tmp_path / "object.bin"

    def chunks():
        yield b"partial"
        raise OSError("the source could not be read")

    with pytest.raises(OSError):
        write_atomically(target, chunks())

    assert list(tmp_path.iterdir()) == []


def test_a_process_that_dies_midway_leaves_the_old_content_at_the_target(tmp_path):
    """A crash runs no clean-up at all: only the temporary file may hold the part written."""
    target = tmp_path / "object.bin"
    target.write_bytes(b"old")
    dying_writer = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from app.storage.atomic_write import write_atomically

        def chunks():
            yield b"partial"
            os._exit(9)

        write_atomically(Path({str(target)!r}), chunks())
        """
    )

    died = subprocess.run([sys.executable, "-c", dying_writer], capture_output=True)

    assert died.returncode == 9, died.stderr
    assert target.read_bytes() == b"old"
    left_behind = [path.name for path in tmp_path.iterdir() if path != target]
    assert len(left_behind) == 1 and "~" in left_behind[0]  # a name no storage key can have


def test_the_folder_is_not_created_for_the_caller(tmp_path):
    """Each caller checks where the folder may be made (a destination confines it under its root)."""
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "missing" / "object.bin", [b"data"])
