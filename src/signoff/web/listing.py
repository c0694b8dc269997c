"""Search, filters and sort for the pages that list things (bugs, repair cases, notes runs,
incidents, evidence, ledger events), on the server, from a plain GET form that works without
JavaScript: `?q=` text, `?state=`, `?owner=`, `?sort=`, `?page=`. A page says how to read each of
its items (its state, its owner, its searchable text, its sort keys); `listed` applies the query.

No page text comes from the query string except the search box's own value (escaped, as a form
field's value): a state, owner or sort the list does not offer is refused with a 400 page that
does not repeat it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode

from fastapi import Request

from signoff.kernel.errors import UsageError

T = TypeVar("T")
MAX_TEXT = 200  # characters of a search; longer is refused
MAX_PAGE = 1_000_000


@dataclass(frozen=True)
class Sort(Generic[T]):
    label: str
    key: Callable[[T], Any]
    reverse: bool = False


@dataclass(frozen=True)
class Lister(Generic[T]):
    """How a page lists its items. `state` and `owner` are the two filters (None: the page has
    no such filter); their labels name them on the form ("state", "kind", "operator"...)."""

    text: Callable[[T], str]
    sorts: Mapping[str, Sort[T]]  # the first is the default
    state: Callable[[T], str] | None = None
    owner: Callable[[T], str] | None = None
    state_label: str = "state"
    owner_label: str = "owner"
    per_page: int = 50
    states: Sequence[str] = ()  # states offered even with no item in them (in this order, first)


@dataclass
class Listing(Generic[T]):
    """One page of the items a query matched, and what the form and the pager need."""

    path: str
    items: list[T]
    total: int
    matched: int
    page: int
    per_page: int
    text: str
    state: str | None
    owner: str | None
    sort: str
    sorts: list[tuple[str, str]]
    states: list[tuple[str, int]] = field(default_factory=list)
    owners: list[tuple[str, int]] = field(default_factory=list)
    state_label: str = "state"
    owner_label: str = "owner"

    @property
    def first(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def filtered(self) -> bool:
        return bool(self.text or self.state or self.owner)

    def link(self, **changes: Any) -> str:
        """This listing's address with `changes` (None drops a parameter; the page goes back to 1
        unless it is the change)."""
        params: dict[str, Any] = {"q": self.text or None, "state": self.state, "owner": self.owner,
                                  "sort": None if self.sort == self.sorts[0][0] else self.sort, "page": None}
        params.update(changes)
        if params.get("page") == 1:
            params["page"] = None
        kept = {k: v for k, v in params.items() if v is not None}
        return self.path + ("?" + urlencode(kept) if kept else "")

    @property
    def previous(self) -> str | None:
        return self.link(page=self.page - 1) if self.page > 1 else None

    @property
    def next(self) -> str | None:
        return self.link(page=self.page + 1) if self.first + len(self.items) < self.matched else None


def _one_of(request: Request, name: str, offered: Sequence[str], what: str) -> str | None:
    value = request.query_params.get(name) or None
    if value is not None and value not in offered:
        # Not echoed: no page text comes from the query string.
        raise UsageError(f"the {what} asked for is not one this list offers", "pick one from the form's list")
    return value


def page_number(raw: str | None) -> int:
    try:
        number = int(raw or "1")
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_PAGE:
        raise UsageError("the page asked for is not a page number", "pages are numbered from 1")
    return number


def search_text(request: Request) -> str:
    text = (request.query_params.get("q") or "").strip()
    if len(text) > MAX_TEXT:
        raise UsageError(f"a search is at most {MAX_TEXT} characters", "search for a shorter part of the text")
    return text


def listed(request: Request, items: Sequence[T], how: Lister[T]) -> Listing[T]:
    """The page of `items` the request's query asks for: filtered by state, owner and text (every
    word, case-insensitive), sorted, paged. Counts per state and owner are of the whole list, so
    the form says how many each choice holds."""
    text = search_text(request)
    states = Counter(how.state(i) for i in items) if how.state else Counter[str]()
    owners = Counter(how.owner(i) for i in items) if how.owner else Counter[str]()
    state_names = [*how.states, *sorted(s for s in states if s not in how.states)]
    state = _one_of(request, "state", state_names, how.state_label) if how.state else None
    owner = _one_of(request, "owner", sorted(owners), how.owner_label) if how.owner else None
    sort = _one_of(request, "sort", list(how.sorts), "order") or next(iter(how.sorts))
    number = page_number(request.query_params.get("page"))
    words = text.casefold().split()
    found = [i for i in items
             if (state is None or how.state is None or how.state(i) == state)
             and (owner is None or how.owner is None or how.owner(i) == owner)
             and all(w in how.text(i).casefold() for w in words)]
    order = how.sorts[sort]
    found.sort(key=order.key, reverse=order.reverse)
    first = (number - 1) * how.per_page
    return Listing(path=request.url.path, items=found[first:first + how.per_page], total=len(items),
                   matched=len(found), page=number, per_page=how.per_page, text=text, state=state, owner=owner,
                   sort=sort, sorts=[(k, s.label) for k, s in how.sorts.items()],
                   states=[(s, states.get(s, 0)) for s in state_names], owners=sorted(owners.items()),
                   state_label=how.state_label, owner_label=how.owner_label)
