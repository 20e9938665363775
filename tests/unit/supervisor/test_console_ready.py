"""`make run` (flask serve-all) says when the console is ready: once /healthz answers, its last line
gives the address to open and the first login, so nobody has to read the logs to know."""

from __future__ import annotations

import socket
import sys

from app.cli import say_console_ready
from app.services.demo.data_workspaces import ADMIN, DEMO_LOGINS
from app.supervisor import Child, Supervisor


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_last_line_gives_the_address_and_the_demo_administrators_sign_in(capsys):
    say_console_ready("http://127.0.0.1:5123/")

    last_line = capsys.readouterr().out.rstrip("\n").splitlines()[-1]
    assert "http://127.0.0.1:5123/" in last_line
    assert ADMIN.email in last_line and ADMIN.password in last_line
    assert last_line.startswith("Ready")


def test_every_demo_sign_in_is_listed_before_the_ready_line(capsys):
    say_console_ready("http://127.0.0.1:5123/")

    lines = capsys.readouterr().out.splitlines()
    for email, password, _who in DEMO_LOGINS:
        assert any(email in line and password in line for line in lines[:-1])


def test_waiting_for_the_web_server_ends_when_its_address_answers():
    port = _free_port()
    web = Child("web", [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], restartable=False)
    supervisor = Supervisor([web], env={}, say=lambda _message: None)
    supervisor.start_all()
    try:
        assert supervisor.wait_until_answering(f"http://127.0.0.1:{port}/") is True
    finally:
        supervisor.stop_all()


def test_waiting_for_the_web_server_gives_up_when_it_dies_first():
    said: list[str] = []
    web = Child("web", [sys.executable, "-c", "raise SystemExit(3)"], restartable=False)
    supervisor = Supervisor([web], env={}, say=said.append)
    supervisor.start_all()

    assert supervisor.wait_until_answering(f"http://127.0.0.1:{_free_port()}/healthz") is False
    assert said == ["web exited with code 3; stopping the rest."]
