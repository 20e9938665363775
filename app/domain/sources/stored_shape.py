"""Reading JSON the application stored (a file's request, its print parameters) back into typed values.

A row written by an older version, or edited by hand, may not have the shape the code expects.
Each reader here checks one value and, when it is not what was written, raises ValidationError
naming where it is wrong, so the file fails with a readable reason rather than a KeyError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from app.domain.errors import ValidationError

T = TypeVar("T")


@dataclass(frozen=True)
class StoredShape:
    """The checks for one kind of stored JSON; `what` names it in messages ("request")."""

    what: str

    def refuse(self, path: str, expected: str) -> ValidationError:
        return ValidationError(f"The stored {self.what} cannot be read: {path} should be {expected}.")

    def mapping(
        self, value: Any, path: str, required: Iterable[str], optional: Iterable[str] = ()
    ) -> Mapping[str, Any]:
        """An object holding every `required` key, and no key outside `required` and `optional`."""
        if not isinstance(value, Mapping):
            raise self.refuse(path, "an object")
        required, optional = tuple(required), tuple(optional)
        missing = [key for key in required if key not in value]
        if missing:
            raise self.refuse(f"{path}.{missing[0]}", "present")
        unknown = sorted(str(key) for key in value if key not in required and key not in optional)
        if unknown:
            raise self.refuse(f"{path}.{unknown[0]}", "absent (it is not a known field)")
        return value

    def items(self, value: Any, path: str) -> list[Any]:
        """A list; a missing one (None) is empty."""
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            raise self.refuse(path, "a list")
        return list(value)

    def each(self, value: Any, path: str, read: Callable[[Any, str], T]) -> tuple[T, ...]:
        """Every item of a list (a missing one is empty) read by `read(item, its path)`."""
        return tuple(read(item, f"{path}[{index}]") for index, item in enumerate(self.items(value, path)))

    def text(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise self.refuse(path, "text")
        return value

    def optional_text(self, value: Any, path: str) -> str | None:
        return None if value is None else self.text(value, path)

    def texts(self, value: Any, path: str) -> tuple[str, ...]:
        return self.each(value, path, self.text)

    def choice(self, value: Any, path: str, choices: Iterable[str]) -> str:
        choices = tuple(choices)
        if value not in choices:
            raise self.refuse(path, "one of " + ", ".join(choices))
        return value

    def flag(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.refuse(path, "true or false")
        return value

    def whole_number(self, value: Any, path: str, minimum: int) -> int:
        # bool is an int to Python, never to JSON's writer here.
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise self.refuse(path, f"a whole number of at least {minimum}")
        return value

    def optional_whole_number(self, value: Any, path: str, minimum: int) -> int | None:
        return None if value is None else self.whole_number(value, path, minimum)

    def text_map(self, value: Any, path: str) -> dict[str, str]:
        """An object of texts; a missing one (None) is empty."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.refuse(path, "an object")
        return {self.text(key, path): self.text(text, f"{path}[{key!r}]") for key, text in value.items()}
