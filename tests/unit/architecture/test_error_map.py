"""One map from errors to answers: every error a person can cause is a DomainError of exactly one
category, each category has its status in `app/blueprints/errors.py`, and an exception outside the
tree says why it is outside."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import app
from app.blueprints.errors import ANSWERS
from app.domain.errors import DomainError


def _app_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in app/, each of its modules imported."""
    found = {}
    for info in pkgutil.walk_packages(app.__path__, "app."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


EXCEPTIONS = _app_exceptions()
DOMAIN_ERRORS = [error for error in EXCEPTIONS if issubclass(error, DomainError) and error is not DomainError]
OUTSIDE = [error for error in EXCEPTIONS if not issubclass(error, DomainError)]


def _name(error: type[BaseException]) -> str:
    return f"{error.__module__}.{error.__qualname__}"


def test_the_categories_are_the_kinds_of_domain_error_there_are():
    """A DomainError of a sixth kind would have no answer: it has to join a category, or the map one."""
    assert set(DomainError.__subclasses__()) == set(ANSWERS)


@pytest.mark.parametrize("error", DOMAIN_ERRORS, ids=_name)
def test_every_domain_error_is_of_exactly_one_category(error):
    categories = [category.__name__ for category in ANSWERS if issubclass(error, category)]
    assert len(categories) == 1, categories


@pytest.mark.parametrize("error", OUTSIDE, ids=_name)
def test_an_exception_outside_the_tree_says_why(error):
    """A job's internal signal, the store's or the mail server's failure: its docstring, a base's
    of its own, or its module's says it is outside DomainError, so a refusal a person caused is
    not left out by mistake."""
    own = [klass for klass in error.__mro__ if klass.__module__.startswith("app.")]
    texts = [inspect.getdoc(klass) or "" for klass in own] + [inspect.getmodule(error).__doc__ or ""]
    assert any("DomainError" in text for text in texts)


def test_the_tree_holds_what_people_cause_and_nothing_else():
    """Guards the two lists above against an import that found nothing."""
    names = {error.__name__ for error in DOMAIN_ERRORS}
    assert {"ValidationError", "NotVisible", "AccessDenied", "TransitionRefused", "Conflict"} <= names
    assert {"FileAttemptSuperseded", "ExecutionAttemptSuperseded", "StorageError"} <= {e.__name__ for e in OUTSIDE}
