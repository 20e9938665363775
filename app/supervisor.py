"""The process supervisor behind `flask serve-all` (`make run`): web, worker and scheduler together.

A worker or scheduler that dies is started again, after a back-off that doubles with every
death in a row (1 s, 2 s, 4 s … at most MAX_BACKOFF_SECONDS) and starts over once the process
has run for STEADY_SECONDS; each death and restart is said on the output, so a crash is never
silent. A file its dead worker was producing is redelivered by the watchdog. The web server
stopping stops everything: what kills it (a port already taken, a broken configuration) would
kill it again.
"""

from __future__ import annotations

import http.client
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

FIRST_BACKOFF_SECONDS = 1.0
READY_POLL_SECONDS = 0.25
MAX_BACKOFF_SECONDS = 60.0
STEADY_SECONDS = 60.0
STOP_GRACE_SECONDS = 10.0


@dataclass
class Child:
    name: str
    command: list[str]
    restartable: bool
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    deaths_in_a_row: int = 0
    restart_at: float | None = field(default=None)


def how_it_stopped(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}"


def backoff_seconds(deaths_in_a_row: int) -> float:
    """The wait before restarting a process that died `deaths_in_a_row` times without running steadily."""
    return min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (deaths_in_a_row - 1))


class Supervisor:
    def __init__(
        self,
        children: list[Child],
        env: dict[str, str],
        say: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ):
        self.children = children
        self._env = env
        self._say = say
        self._clock = clock

    def start_all(self) -> None:
        for child in self.children:
            self._start(child)

    def check(self) -> bool:
        """Restart what died and is due; False when everything must stop (the web server died)."""
        now = self._clock()
        for child in self.children:
            if child.process is None:
                if child.restart_at is not None and now >= child.restart_at:
                    process = self._start(child)
                    self._say(f"{child.name} restarted (pid {process.pid}).")
                continue
            returncode = child.process.poll()
            if returncode is None:
                if child.deaths_in_a_row and now - child.started_at >= STEADY_SECONDS:
                    child.deaths_in_a_row = 0
                continue
            if not child.restartable:
                self._say(f"{child.name} {how_it_stopped(returncode)}; stopping the rest.")
                return False
            child.deaths_in_a_row += 1
            delay = backoff_seconds(child.deaths_in_a_row)
            child.process = None
            child.restart_at = now + delay
            self._say(f"{child.name} {how_it_stopped(returncode)}; restarting it in {delay:g} s.")
        return True

    def wait_until_answering(self, url: str) -> bool:
        """Supervise until `url` answers 200 (the web server is up and its services answer); False
        when everything must stop first."""
        while self.check():
            try:
                with urllib.request.urlopen(url, timeout=READY_POLL_SECONDS * 4) as response:
                    if response.status == 200:
                        return True
            except (urllib.error.URLError, http.client.HTTPException, OSError):
                pass  # not listening yet, or a service it checks not answering yet
            time.sleep(READY_POLL_SECONDS)
        return False

    def stop_all(self) -> None:
        """SIGTERM to every running child (a worker finishes its job in hand), SIGKILL after the grace."""
        running = [child.process for child in self.children if child.process and child.process.poll() is None]
        for process in running:
            process.terminate()
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()

    def _start(self, child: Child) -> subprocess.Popen:
        child.process = subprocess.Popen(child.command, env=self._env)
        child.started_at = self._clock()
        child.restart_at = None
        return child.process
