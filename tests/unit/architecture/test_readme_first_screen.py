"""A newcomer reads the README's first screen: the two commands that set everything up are on it."""

from __future__ import annotations

from pathlib import Path

from app.cli import say_console_ready

README = Path(__file__).resolve().parents[3] / "README.md"
FIRST_SCREEN_LINES = 40


def _first_screen() -> list[str]:
    return README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN_LINES]


def test_the_readmes_first_screen_holds_make_run_and_make_test_as_commands():
    commands = {line.split("#", 1)[0].strip() for line in _first_screen()}
    assert {"make run", "make test"} <= commands


def test_the_readmes_first_screen_shows_the_line_make_run_prints_when_the_console_is_ready(capsys):
    say_console_ready("http://127.0.0.1:5000/")
    ready_line = capsys.readouterr().out.splitlines()[-1]

    assert ready_line in _first_screen()
