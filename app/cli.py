"""Command-line entry points: `flask seed-demo`, `flask scheduler`, `flask serve-all`, `flask remove-member`,
`flask schedules import-legacy`, `flask coverage reconcile`, `flask credentials rotate`."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path

import click
from flask import Flask, current_app
from flask.cli import AppGroup, with_appcontext


@click.command("seed-demo")
@click.option("--rows", type=int, default=None, help="Timesheet entries per workspace (default SEED_ROWS or 5000).")
def seed_demo_command(rows: int | None) -> None:
    """Create the demo workspaces, people and datasets (once; a second run changes nothing)."""
    from app.services.demo.demo_export_seed import seed_demo_export
    from app.services.demo.demo_seed import seed_demo

    created = seed_demo(rows if rows is not None else current_app.config["SETTINGS"].seed_rows)
    click.echo("Demo data created." if created else "Demo data already present; nothing changed.")
    _reconcile_coverage_or_exit()
    click.echo(seed_demo_export())


@click.command("scheduler")
def scheduler_command() -> None:
    """Run the periodic loop: outbox dispatch, watchdog and sweeps, until stopped."""
    from jobs.scheduler import run_forever

    run_forever()


def _redis_answers() -> bool:
    from redis.exceptions import RedisError

    from app.services.work.queue import redis_connection

    try:
        return bool(redis_connection().ping())
    except RedisError:
        return False


def _fresh_metrics_directory(instance_path: Path) -> str:
    """Where web, worker and scheduler write their metrics; emptied at start, as the processes are new."""
    directory = instance_path / "metrics"
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    return str(directory)


@click.command("serve-all")
@click.option("--port", type=int, default=None, help="Web port (default PORT or 5000).")
def serve_all_command(port: int | None) -> None:
    """Migrate, seed, then run web, one RQ worker and the scheduler together until Ctrl-C.

    A worker or scheduler that dies is restarted with a back-off (app/supervisor.py).
    """
    from flask_migrate import upgrade

    from app import create_app
    from app.config import Settings, environment_for_children
    from app.services.demo.demo_export_seed import seed_demo_export
    from app.services.demo.demo_seed import seed_demo
    from app.supervisor import Child, Supervisor

    settings = current_app.config["SETTINGS"]
    port = port if port is not None else settings.port
    if not _redis_answers():
        click.echo(
            f"Redis does not answer at {settings.redis_url}; start it with: "
            "redis-server --daemonize yes --bind 127.0.0.1 --port 6379",
            err=True,
        )
        sys.exit(1)
    # The children's environment: the embedded defaults of one machine for what this one does not set.
    env = environment_for_children(
        defaults={
            "DESTINATIONS_ROOT": str(settings.instance_path / "destinations"),
            "PROMETHEUS_MULTIPROC_DIR": _fresh_metrics_directory(settings.instance_path),
            # The embedded default serves plain HTTP on 127.0.0.1, where a Secure cookie would never come back.
            "SESSION_COOKIE_SECURE": "false",
        },
        overrides={"FLASK_APP": "wsgi"},
    )
    # Seeding here runs with the children's settings, so the demo's destination is in their root.
    one_machine = Settings.from_environment(env)
    if one_machine.destinations_root is not None:
        Path(one_machine.destinations_root).mkdir(parents=True, exist_ok=True)
    with create_app(one_machine).app_context():
        upgrade()
        seed_demo(one_machine.seed_rows)
        _reconcile_coverage_or_exit()
        click.echo(seed_demo_export())

    python = sys.executable
    flask = [python, "-m", "flask", "--app", "wsgi"]
    supervisor = Supervisor(
        [
            Child("web", [*flask, "run", "--host", "127.0.0.1", "--port", str(port)], restartable=False),
            Child("worker", [python, "-m", "jobs.worker"], restartable=True),
            Child("scheduler", [*flask, "scheduler"], restartable=True),
        ],
        env,
        say=lambda message: click.echo(message, err=True),
    )

    def stop(*_args) -> None:
        supervisor.stop_all()
        sys.exit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    supervisor.start_all()
    address = f"http://127.0.0.1:{port}/"
    if supervisor.wait_until_answering(f"{address}healthz"):
        say_console_ready(address)
        while supervisor.check():
            time.sleep(1)
    supervisor.stop_all()
    sys.exit(1)


def say_console_ready(address: str) -> None:
    """What serve-all says once the console answers /healthz: how it behaves, the demo sign-ins, and
    last the address to open with the first login, so a person knows it is ready without the logs."""
    from app.services.demo.data_workspaces import ADMIN, DEMO_LOGINS

    click.echo("\nA worker or scheduler that stops is restarted; the web server stopping stops everything.")
    click.echo("Demo sign-ins (email, password, who):")
    for email, password, who in DEMO_LOGINS:
        click.echo(f"  {email:32} {password:16} {who}")
    click.echo(f"Ready: open {address} and sign in as {ADMIN.email}, password {ADMIN.password}  (Ctrl-C stops all)")


@click.command("remove-member")
@click.argument("email")
@click.argument("workspace_id", type=int)
@with_appcontext
def remove_member_command(email: str, workspace_id: int) -> None:
    """Remove a person from a workspace; removal from their last workspace signs them out everywhere."""
    from sqlalchemy import func, select

    from app.extensions import db
    from app.models import Membership, Person
    from app.services.accounts.authentication import remove_membership

    membership = db.session.execute(
        select(Membership)
        .join(Person)
        .where(func.lower(Person.email) == email.strip().lower(), Membership.workspace_id == workspace_id)
    ).scalar_one_or_none()
    if membership is None:
        click.echo(f"{email} is not a member of workspace {workspace_id}; nothing changed.", err=True)
        sys.exit(1)
    remove_membership(membership)
    click.echo(f"{email} is no longer a member of workspace {workspace_id}.")


schedules_group = AppGroup("schedules", help="Schedules: recurring delivery of files by email.")


@schedules_group.command("import-legacy")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--workspace",
    "workspace_id",
    type=int,
    default=None,
    help="Import every entry into this workspace (an entry naming another one is refused).",
)
def import_legacy_command(file: str, workspace_id: int | None) -> None:
    """Import schedules exported from the old system (docs/legacy-schedules.md); they arrive paused.

    One line per entry: imported (as which schedule) or refused (with the reason). Exits with 1
    when any entry was refused; the others are imported all the same.
    """
    from app.services.schedules.legacy_import import (
        LegacyFileError,
        import_legacy_schedules,
        printable,
        read_legacy_file,
    )

    try:
        with open(file, encoding="utf-8") as handle:
            text = handle.read()
        outcomes = import_legacy_schedules(read_legacy_file(text), workspace_id, origin=os.path.basename(file))
    except UnicodeDecodeError:
        click.echo(f"{file} is not UTF-8 text; nothing was imported.", err=True)
        sys.exit(1)
    except LegacyFileError as exc:
        click.echo(f"{file}: {exc}", err=True)
        sys.exit(1)
    for outcome in outcomes:
        if outcome.imported:
            # Names and reasons quote the file's text: one line each, no terminal control characters.
            click.echo(
                f"{outcome.label}: imported as schedule {outcome.schedule_id} "
                f"“{printable(outcome.schedule_name or '')}”, paused until the old delivery is switched off."
            )
        else:
            click.echo(f"{outcome.label}: refused: {printable(outcome.reason or '')}", err=True)
    refused = sum(1 for outcome in outcomes if not outcome.imported)
    click.echo(f"{len(outcomes) - refused} imported, {refused} refused.")
    if refused:
        sys.exit(1)


coverage_group = AppGroup("coverage", help="The coverage registry: which datasets workspace packages carry.")


def _reconcile_coverage_or_exit() -> None:
    from app.services.workspace_export.coverage import CoverageConflict, reconcile_coverage

    try:
        outcome = reconcile_coverage()
    except CoverageConflict as exc:
        click.echo(f"Coverage registry not reconciled: {exc}", err=True)
        sys.exit(1)
    for change in outcome.changes:
        click.echo(change)
    if outcome.advanced:
        click.echo(f"Coverage registry is now version {outcome.registry_version}.")
    else:
        click.echo(
            f"Coverage registry already matches the declarations (version {outcome.registry_version}); nothing changed."
        )


@coverage_group.command("reconcile")
def reconcile_coverage_command() -> None:
    """Record the datasets declared in app/domain/workspace_export/coverage.py and retire recorded
    versions no longer declared; refuse changed columns under a recorded version.

    Exits with 1, changing nothing, when a recorded (dataset, schema version) would change its content
    hash, or when one dataset is declared active at two schema versions.
    """
    _reconcile_coverage_or_exit()


credentials_group = AppGroup("credentials", help="Stored destination secrets and CREDENTIALS_KEY.")


@credentials_group.command("rotate")
def rotate_credentials_command() -> None:
    """Re-encrypt every stored destination secret with the first key of CREDENTIALS_KEY.

    Run it once every machine has the new key first and the old ones after it; then the old keys
    may be dropped. Exits with 1 when a secret none of the keys reads is left (named by destination).
    """
    from app.services.destinations.destination_secrets import reencrypt_destination_secrets

    rotation = reencrypt_destination_secrets()
    click.echo(f"{rotation.reencrypted} stored secret(s) re-encrypted with the first key of CREDENTIALS_KEY.")
    if rotation.unreadable:
        named = ", ".join(str(destination_id) for destination_id in rotation.unreadable)
        click.echo(
            f"No key of CREDENTIALS_KEY reads the secret of destination(s) {named}; keep the key they were "
            "stored under in CREDENTIALS_KEY and run this again, or have their administrators enter them again.",
            err=True,
        )
        sys.exit(1)


def register(app: Flask) -> None:
    app.cli.add_command(schedules_group)
    app.cli.add_command(coverage_group)
    app.cli.add_command(credentials_group)
    for command in (seed_demo_command, scheduler_command, serve_all_command, remove_member_command):
        app.cli.add_command(command)
