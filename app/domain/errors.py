"""Errors the domain raises; routes turn them into messages, jobs into failure codes."""


class DomainError(Exception):
    """Base class: the message is meant for the person who caused it."""


class ValidationError(DomainError):
    """Input that cannot be accepted; `field` names the form field when there is one."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class TransitionRefused(DomainError):
    """A lifecycle change whose starting status did not hold in the database."""


class AccessDenied(DomainError):
    """The person may not see or do this."""
