"""SHA256SUMS lists each volume in the format `sha256sum -c` reads."""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from app.rendering.package.checksums import build_checksums


def test_each_volume_is_a_line_of_digest_two_spaces_and_relative_path():
    data = build_checksums([("teams/teams-00001.csv.zip", "ab" * 32), ("people/people-00001.csv.zip", "cd" * 32)])
    assert data == (f"{'ab' * 32}  teams/teams-00001.csv.zip\n{'cd' * 32}  people/people-00001.csv.zip\n".encode())


def test_sha256sum_checks_the_files_the_lines_name(tmp_path):
    (tmp_path / "teams").mkdir()
    volume = tmp_path / "teams" / "teams-00001.parquet"
    volume.write_bytes(b"PAR1 any bytes PAR1")
    sums = build_checksums([("teams/teams-00001.parquet", hashlib.sha256(volume.read_bytes()).hexdigest())])
    (tmp_path / "SHA256SUMS").write_bytes(sums)

    checked = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path, capture_output=True, text=True)

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == "teams/teams-00001.parquet: OK\n"


@pytest.mark.parametrize("path", ["", "/etc/passwd", "a\\b.zip", "a\nb.zip"])
def test_a_path_sha256sum_would_misread_is_refused(path):
    with pytest.raises(ValueError, match="relative path"):
        build_checksums([(path, "ab" * 32)])


@pytest.mark.parametrize("digest", ["AB" * 32, "ab" * 31, "zz" * 32])
def test_anything_but_a_lower_case_sha256_hex_digest_is_refused(digest):
    with pytest.raises(ValueError, match="SHA-256"):
        build_checksums([("teams/teams-00001.csv.zip", digest)])
