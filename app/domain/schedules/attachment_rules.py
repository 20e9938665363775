"""The workspace's attachment policy for schedule emails: "links only", or files attached up to a
limit in MiB counted after base64 encoding (what the file weighs inside the message).

One rule for every reader: the settings form, the schedule form and the sending of a run.
"""

from __future__ import annotations

from app.domain.errors import ValidationError
from app.domain.values.sizes import size_label

LIMIT_MB = (1, 20)
MIB = 1 << 20
LINKS_ONLY, ATTACH = "links", "attach"
CHOICES = {
    LINKS_ONLY: "Links only: every email carries a download link",
    ATTACH: "Attach files up to a size: schedules may choose to attach their file",
}
NOT_ALLOWED = (
    "This workspace sends links only: its administrators have not allowed attachments "
    "(workspace export settings, “Email attachments”)."
)


def encoded_size(size_bytes: int) -> int:
    """The size of the file base64-encoded: four characters for every three bytes or part of three."""
    return 4 * -(-size_bytes // 3)


def fits(size_bytes: int, limit_mb: int) -> bool:
    return encoded_size(size_bytes) <= limit_mb * MIB


def checked_limit(choice: str, limit_text: str) -> int | None:
    """The policy a form asks for: None for links only, else the limit in MiB."""
    if choice == LINKS_ONLY:
        return None
    if choice != ATTACH:
        raise ValidationError("Choose links only or attachments up to a size.", "choice")
    text = limit_text.strip()
    low, high = LIMIT_MB
    if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
        raise ValidationError(f"The largest attachment is a whole number of MB from {low} to {high}.", "limit_mb")
    return int(text)


def describe(limit_mb: int | None) -> str:
    if limit_mb is None:
        return "Links only"
    return f"Files up to {limit_mb} MB are attached (counted after encoding)"


def over_limit_sentence(size_bytes: int, limit_mb: int) -> str:
    """Why a file a schedule would attach is linked instead, in its message."""
    return (
        f"The file is {size_label(encoded_size(size_bytes), round_up=True)} encoded for email, over this "
        f"workspace's {limit_mb} MB attachment limit, so it is linked instead."
    )


def delivery_words(attached: bool | None, limit_mb: int | None) -> str:
    """What a recipient row's message carried, for the run history."""
    if attached is None:
        return "Linked"
    if attached:
        return "Attached and linked"
    return f"Linked only: over the {limit_mb} MB attachment limit"
