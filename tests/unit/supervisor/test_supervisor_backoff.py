"""The serve-all supervisor restarts a dying worker or scheduler later each time, and says so."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.supervisor import MAX_BACKOFF_SECONDS, STEADY_SECONDS, Child, Supervisor

#: A child that runs until the file named after it exists, then exits with code 3.
RUNS_UNTIL_RELEASED = (
    "import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.02)\nraise SystemExit(3)\n"
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def release(tmp_path) -> Path:
    return tmp_path / "release"


def _child(name: str, release: Path, restartable: bool = True) -> Child:
    return Child(name, [sys.executable, "-c", RUNS_UNTIL_RELEASED, str(release)], restartable=restartable)


def _supervised(child: Child) -> tuple[Supervisor, Clock, list[str]]:
    clock, said = Clock(), []
    supervisor = Supervisor([child], env={}, say=said.append, clock=clock)
    supervisor.start_all()
    return supervisor, clock, said


def _wait_for_death(child: Child) -> None:
    assert child.process is not None
    child.process.wait(timeout=30)


def test_a_child_dying_again_and_again_waits_twice_as_long_each_time_up_to_the_cap(release):
    """Deaths in a row wait 1, 2, 4 … seconds before the restart, never more than the cap, each one said."""
    release.touch()
    child = _child("worker", release)
    supervisor, clock, said = _supervised(child)
    waits = []
    for _ in range(8):
        _wait_for_death(child)
        assert supervisor.check()
        assert child.process is None
        waits.append(child.restart_at - clock.now)
        clock.now = child.restart_at
        assert supervisor.check()
        assert child.process is not None

    assert waits == [1, 2, 4, 8, 16, 32, MAX_BACKOFF_SECONDS, MAX_BACKOFF_SECONDS]
    assert said[0] == "worker exited with code 3; restarting it in 1 s."
    assert said[1] == f"worker restarted (pid {said[1].split()[-1][:-2]})."
    assert said[2] == "worker exited with code 3; restarting it in 2 s."
    _wait_for_death(child)


def test_a_child_that_ran_steadily_waits_one_second_again_after_its_next_death(release):
    """Once a restarted child has run for STEADY_SECONDS, its next death is treated as the first."""
    child = _child("scheduler", release)
    supervisor, clock, said = _supervised(child)
    for _ in range(3):
        release.touch()
        _wait_for_death(child)
        supervisor.check()
        release.unlink()  # the next start runs until released
        clock.now = child.restart_at
        supervisor.check()
    assert said[-2] == "scheduler exited with code 3; restarting it in 4 s."

    clock.now += STEADY_SECONDS
    assert supervisor.check()
    release.touch()
    _wait_for_death(child)
    supervisor.check()

    assert said[-1] == "scheduler exited with code 3; restarting it in 1 s."


def test_the_web_server_stopping_stops_everything(release):
    """The web server is not restarted: its death ends the supervision."""
    release.touch()
    child = _child("web", release, restartable=False)
    supervisor, _clock, said = _supervised(child)
    _wait_for_death(child)

    assert supervisor.check() is False
    assert said == ["web exited with code 3; stopping the rest."]
