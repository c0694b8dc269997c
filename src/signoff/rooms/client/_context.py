"""Reading a room's context back, page by page, to find one message (a send receipt's source).

A Switch core answers a send with only the event id, so the sender and the exact stored text must
be read back with `read_context`, newest first. In a busy room the message may be several pages
back. `read_context` pages by time (`before`, exclusive, millisecond precision), and many messages
can share one millisecond, so each next page ends just after the oldest time seen; a page that
brings nothing new doubles the page size instead (a burst in one millisecond).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from signoff.kernel.errors import UnavailableError

MAX_LIMIT = 1000


def entries(context: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every entry of a `read_context` answer (thread roots and replies). A reply carries its
    thread's root id as `thread_id` (the answer says it only by nesting); a root has None."""
    for thread in context.get("threads") or []:
        if not isinstance(thread, dict):
            continue
        root = thread.get("root") or {}
        if isinstance(root, dict):
            yield {**root, "thread_id": None}
        for entry in thread.get("replies") or []:
            if isinstance(entry, dict):
                yield {**entry, "thread_id": root.get("id") if isinstance(root, dict) else None}


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


class ContextPager:
    """The arguments of each next `read_context` call, and what each answer tells. With
    `message_id` None it reads the whole room (`seen` then holds every entry)."""

    def __init__(self, message_id: str | None, page: int = 50, max_pages: int = 40) -> None:
        self.message_id = message_id
        self.limit = page
        self.pages_left = max_pages
        self.before: int | None = None
        self.seen: dict[str, dict[str, Any]] = {}
        self.pages: list[list[dict[str, Any]]] = []  # the fresh entries of each page, newest page first
        self.done = False
        self.truncated = False

    def room(self) -> list[dict[str, Any]]:
        """After a whole-room read: every entry, oldest first (UnavailableError if cut off)."""
        if self.pages_left <= 0 and self.truncated:
            raise UnavailableError(f"the room has more than {len(self.pages)} pages of context",
                                   "read it in parts (since/before) or raise max_pages")
        # Oldest page first, then by time; entries of one millisecond keep the server's order.
        ordered = [entry for found in reversed(self.pages) for entry in found]
        return sorted(ordered, key=lambda e: int(e.get("timestamp") or 0))

    def args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"limit": self.limit}
        if self.before is not None:
            args["before"] = iso_ms(self.before)
        return args

    def feed(self, context: dict[str, Any]) -> dict[str, Any] | None:
        """The entry when this page holds it; otherwise prepares the next page (or sets `done`)."""
        self.pages_left -= 1
        self.truncated = bool(context.get("truncated"))
        fresh = 0
        self.pages.append([])
        for entry in entries(context):
            if "body" not in entry:
                continue  # a thread root older than this page: it comes with its own page
            if self.message_id is not None and entry.get("id") == self.message_id:
                self.done = True
                return entry
            ident = str(entry.get("id"))
            if ident not in self.seen:
                self.seen[ident] = entry
                self.pages[-1].append(entry)
                fresh += 1
        oldest = context.get("oldest_timestamp")
        if not context.get("truncated") or not isinstance(oldest, int) or self.pages_left <= 0:
            self.done = True
            return None
        if fresh:
            self.before = oldest + 1  # inclusive of the oldest millisecond: it may hold more
        elif self.limit < MAX_LIMIT:
            self.limit = min(self.limit * 2, MAX_LIMIT)
        else:
            self.done = True  # more than MAX_LIMIT messages in one millisecond: give up honestly
        return None


async def page_back(call: Callable[..., Awaitable[Any]], message_id: str, page: int = 50,
                    max_pages: int = 40) -> dict[str, Any] | None:
    pager = ContextPager(message_id, page, max_pages)
    while not pager.done:
        found = pager.feed(await call("read_context", **pager.args()))
        if found is not None:
            return found
    return None


async def read_room(call: Callable[..., Awaitable[Any]], page: int = 100, max_pages: int = 200) -> list[dict[str, Any]]:
    """Every message of the connected room that `read_context` reaches, oldest first. Raises
    UnavailableError when the room is longer than `max_pages` pages: a partial read would look
    like a complete one."""
    pager = ContextPager(None, page, max_pages)
    while not pager.done:
        pager.feed(await call("read_context", **pager.args()))
    return pager.room()


def read_room_sync(call: Callable[..., Any], page: int = 100, max_pages: int = 200) -> list[dict[str, Any]]:
    """`read_room` for synchronous callers."""
    pager = ContextPager(None, page, max_pages)
    while not pager.done:
        pager.feed(call("read_context", **pager.args()))
    return pager.room()


def page_back_sync(call: Callable[..., Any], message_id: str, page: int = 50,
                   max_pages: int = 40) -> dict[str, Any] | None:
    pager = ContextPager(message_id, page, max_pages)
    while not pager.done:
        found = pager.feed(call("read_context", **pager.args()))
        if found is not None:
            return found
    return None
