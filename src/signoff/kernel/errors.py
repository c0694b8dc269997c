"""One error hierarchy. Every message says what is wrong; `fix` says what to do about it."""

from __future__ import annotations

from typing import Any


class SignoffError(Exception):
    """Base of every error signoff raises on purpose. Faces print `message` and `fix`, never a traceback."""

    exit_code = 2

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return self.message if not self.fix else f"{self.message} ({self.fix})"

    def facts(self) -> dict[str, Any]:
        """What a client may act on beyond the message (the airlock's families, for one): an HTTP
        error body carries these beside `detail` and `fix`."""
        return {}


class UsageError(SignoffError):
    """The caller asked for something malformed: a bad argument, file or document."""


class InvalidRequest(UsageError):
    """A request's body or parameters do not fit what the endpoint takes (HTTP 422)."""

    http_status = 422


class NotFoundError(SignoffError):
    """A named thing (case, key, file, revision) does not exist."""


class ConflictError(SignoffError):
    """Optimistic concurrency lost: re-read and re-apply."""

    exit_code = 4


class RefusedError(SignoffError):
    """A rule of the system forbids this action (authority, policy, budget, guard)."""

    exit_code = 3


class Unauthenticated(RefusedError):
    """No credential, or one nobody issued (HTTP 401): the caller is not known at all."""

    http_status = 401


class IntegrityError(SignoffError):
    """Stored or supplied data failed a digest, signature or chain check."""

    exit_code = 1


class UnavailableError(SignoffError):
    """A component signoff needs (sandbox backend, database, git, node) is missing or not working."""

    exit_code = 3
