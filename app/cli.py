"""Command-line entry points: `flask seed-demo`, `flask scheduler`, `flask serve-all`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import click
from flask import Flask, current_app


@click.command("seed-demo")
@click.option("--rows", type=int, default=None, help="Timesheet entries per workspace (default SEED_ROWS or 5000).")
def seed_demo_command(rows: int | None) -> None:
    """Create the demo workspaces, people and datasets (once; a second run changes nothing)."""
    from app.services.demo_seed import seed_demo

    rows = rows if rows is not None else int(os.environ.get("SEED_ROWS") or 5000)
    created = seed_demo(rows)
    click.echo("Demo data created." if created else "Demo data already present; nothing changed.")


@click.command("scheduler")
def scheduler_command() -> None:
    """Run the periodic loop: outbox dispatch, watchdog and sweeps, until stopped."""
    from jobs.scheduler import run_forever

    run_forever()


def _redis_answers() -> bool:
    from redis.exceptions import RedisError

    try:
        return bool(current_app.redis.ping())
    except RedisError:
        return False


@click.command("serve-all")
@click.option("--port", type=int, default=lambda: int(os.environ.get("PORT") or 5000))
def serve_all_command(port: int) -> None:
    """Migrate, seed, then run web, one RQ worker and the scheduler together until Ctrl-C."""
    from flask_migrate import upgrade

    from app.services.demo_seed import DEMO_LOGINS, seed_demo

    settings = current_app.config["SETTINGS"]
    if not _redis_answers():
        click.echo(
            f"Redis does not answer at {settings.redis_url}; start it with: "
            "redis-server --daemonize yes --bind 127.0.0.1 --port 6379",
            err=True,
        )
        sys.exit(1)
    upgrade()
    seed_demo(int(os.environ.get("SEED_ROWS") or 5000))

    python = sys.executable
    env = {**os.environ, "FLASK_APP": "wsgi"}
    commands = {
        "web": [python, "-m", "flask", "--app", "wsgi", "run", "--host", "127.0.0.1", "--port", str(port)],
        "worker": [python, "-m", "jobs.worker"],
        "scheduler": [python, "-m", "flask", "--app", "wsgi", "scheduler"],
    }
    processes = {name: subprocess.Popen(cmd, env=env) for name, cmd in commands.items()}
    click.echo(f"\nRhythm Exports is running at http://127.0.0.1:{port}/  (Ctrl-C stops everything)")
    click.echo("Demo sign-ins (email, password, who):")
    for email, password, who in DEMO_LOGINS:
        click.echo(f"  {email:32} {password:16} {who}")

    def stop(*_args) -> None:
        for process in processes.values():
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 10
        for process in processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
        sys.exit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    while True:
        for name, process in processes.items():
            if process.poll() is not None:
                click.echo(f"{name} stopped with exit code {process.returncode}; stopping the rest.", err=True)
                stop()
        time.sleep(1)


def register(app: Flask) -> None:
    for command in (seed_demo_command, scheduler_command, serve_all_command):
        app.cli.add_command(command)
