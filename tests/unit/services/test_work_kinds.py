"""The work engine's registry (app/services/work/kinds.py): every job the product enqueues belongs
to exactly one kind, every kind's job function exists, and the scheduler runs one task per
concern, never one per kind (jobs/periodic.py)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import fields
from pathlib import Path

import pytest
from werkzeug.utils import import_string

from app.services.work import engine
from app.services.work.kinds import WORK_KINDS
from app.services.work.work_kind import WorkKind
from jobs.periodic import PERIODIC_TASKS

ROOT = Path(__file__).resolve().parents[3]
JOB_FUNCTION = re.compile(r"^jobs\.\w+\.\w+$")


def _python_files(*folders: str) -> list[Path]:
    return [path for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))]


def _enqueued_job_functions() -> set[str]:
    """Every dotted path of a job function named in the product's code (what a dispatcher enqueues)."""
    return {
        node.value
        for path in _python_files("app", "jobs")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and JOB_FUNCTION.match(node.value)
    }


def _rq_job_functions() -> set[str]:
    """Every function in jobs/ decorated as an RQ job (`observed_job`)."""
    found = set()
    for path in _python_files("jobs"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "observed_job"
                for decorator in node.decorator_list
            ):
                found.add(f"jobs.{path.stem}.{node.name}")
    return found


def test_every_job_function_the_product_enqueues_has_exactly_one_work_kind():
    kinds_per_function = Counter(kind.job_function for kind in WORK_KINDS)

    enqueued = _enqueued_job_functions() | _rq_job_functions()

    assert enqueued, "no job function found: the scan is broken"
    assert {function: kinds_per_function[function] for function in enqueued} == dict.fromkeys(enqueued, 1)


@pytest.mark.parametrize("kind", WORK_KINDS, ids=lambda kind: kind.name)
def test_every_work_kind_names_a_job_function_that_exists(kind):
    assert callable(import_string(kind.job_function))


def test_kinds_have_distinct_names_and_job_id_slugs():
    assert len({kind.name for kind in WORK_KINDS}) == len(WORK_KINDS)
    assert len({kind.slug for kind in WORK_KINDS}) == len(WORK_KINDS)


def test_a_failed_job_is_traced_to_its_kind_by_its_function():
    assert all(engine.kind_of(kind.job_function) is kind for kind in WORK_KINDS)
    assert engine.kind_of("jobs.something_else.run") is None


def test_the_scheduler_runs_each_engine_concern_once_over_every_kind():
    runs = Counter(task.run for task in PERIODIC_TASKS)

    assert [runs[engine.dispatch_pending], runs[engine.redispatch_lost], runs[engine.redeliver_lapsed]] == [1, 1, 1]


def test_a_kind_declares_and_implements_no_turn_of_its_own():
    """The claim, the lost and lapsed queries and the staff requeue are the engine's, written once
    from each declaration: what a kind may give as code is only what it alone knows."""
    given_as_code = {field.name for field in fields(WorkKind) if "Callable" in str(field.type)}

    assert given_as_code == {"give_up", "retry_later", "priority_of", "attempts_used", "before_requeue"}


def test_no_periodic_task_names_a_single_kind():
    naming_a_kind = re.compile(r"\b(files?|runs?|executions?|deliver(y|ies)|outbox|schedules?|workspace|packages?)\b")
    engine_tasks = [
        task
        for task in PERIODIC_TASKS
        if task.run in (engine.dispatch_pending, engine.redispatch_lost, engine.redeliver_lapsed)
    ]

    assert not [task.name for task in engine_tasks if naming_a_kind.search(task.name)]
    assert len({task.name for task in PERIODIC_TASKS}) == len(PERIODIC_TASKS)
