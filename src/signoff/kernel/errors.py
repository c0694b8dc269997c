"""One error hierarchy. Every message says what is wrong; `fix` says what to do about it."""

from __future__ import annotations


class SignoffError(Exception):
    """Base of every error signoff raises on purpose. Faces print `message` and `fix`, never a traceback."""

    exit_code = 2

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return self.message if not self.fix else f"{self.message} ({self.fix})"


class UsageError(SignoffError):
    """The caller asked for something malformed: a bad argument, file or document."""


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
