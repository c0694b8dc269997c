"""The aggregate contract every workflow follows: case types, typed events, fold, decide.

A workflow keeps each thing it tracks (a bug, a notes run, a repair case, an incident's record
chain) as one ledger case. This module says what a case may hold and how it changes:

- **Case types** (`CaseType`): a case id is the case type's prefix followed by a key, e.g.
  `desk/bug/BUG-0001`. Prefixes are registered once and no prefix may start another, so a case id
  names exactly one case type. The prefixes are the ones already written in ledgers (they are hashed
  into every event), which is why they do not share one separator.
- **Typed, versioned events** (`EventBody`): one class per event type, declared with the type
  string that is stored, e.g. `class BugOpened(EventBody, type="bug.opened", case=BUG)`. The fields
  are checked (strict types, no unknown keys) when an event is made and when a stored event is read,
  so nothing enters or leaves a case that its type does not declare. Version 1 is stored under the
  bare type string; a later version `n` under `type@n`, and the class says how each older payload
  becomes the next (`upcasts`), so events written years ago are read by today's class, and their
  stored bytes (which the audit chain hashes) are never rewritten.
- **Fold by dispatch** (`Fold`): a state is built by handlers registered per event class; a fold
  reports the event types of its case type that it does not handle (`missing`), and a test holds
  every workflow's fold to cover all of them.
- **Pure decisions**: `decide(state, command) -> Decision` (events and jobs), no I/O. `Cases` runs a
  decision against a `Ledger` (read, fold, decide, append at the version read; retried on a
  conflict), which is what a workflow's service facade calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from signoff.kernel.errors import SignoffError, UsageError
from signoff.ledger.contract import Ledger
from signoff.ledger.events import AppendResult, Event, NewEvent, NewJob

S = TypeVar("S")
E = TypeVar("E", bound="EventBody")

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,180}$")
_TYPE = re.compile(r"^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$")


class UnreadableEventError(SignoffError):
    """A stored event that no registered event class reads: an unknown type, or a payload its class
    does not declare. The ledger is intact; the code reading it is older or narrower than the data."""


# -- case types ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseType:
    """A kind of case: `name` is how code and docs call it, `prefix` starts every such case id."""

    name: str
    prefix: str
    events: dict[str, type[EventBody]] = field(default_factory=dict, compare=False, repr=False)

    def case_id(self, key: str) -> str:
        if not isinstance(key, str) or not _KEY.match(key) or ".." in key:
            raise UsageError(f"{key!r} is not a valid {self.name} key",
                             "a key is 1 to 181 letters, digits and . _ : @ / + - (starting with a letter or digit)")
        return self.prefix + key

    def key_of(self, case_id: str) -> str:
        if not case_id.startswith(self.prefix):
            raise UsageError(f"{case_id!r} is not a {self.name} case", f"its id starts with {self.prefix!r}")
        return case_id[len(self.prefix):]

    def owns(self, case_id: str) -> bool:
        return case_id.startswith(self.prefix)


_CASE_TYPES: dict[str, CaseType] = {}


def case_type(name: str, prefix: str) -> CaseType:
    """Register a case type. Its prefix may not start, or be started by, another's."""
    if name in _CASE_TYPES:
        raise ValueError(f"case type {name!r} is registered twice")
    for other in _CASE_TYPES.values():
        if other.prefix.startswith(prefix) or prefix.startswith(other.prefix):
            raise ValueError(f"case prefix {prefix!r} overlaps {other.name}'s {other.prefix!r}")
    made = _CASE_TYPES[name] = CaseType(name, prefix)
    return made


def case_types() -> list[CaseType]:
    return list(_CASE_TYPES.values())


def case_type_of(case_id: str) -> CaseType | None:
    """The registered case type a case id belongs to (None: a case no typed workflow owns yet)."""
    for ct in _CASE_TYPES.values():
        if ct.owns(case_id):
            return ct
    return None


# -- typed events -------------------------------------------------------------------------------

_EVENT_TYPES: dict[str, type[EventBody]] = {}


class EventBody(BaseModel):
    """The payload of one event type, as a class. Subclass with `type=` (the stored type string),
    `case=` (its CaseType) and optionally `version=` (default 1) and `upcasts` (a dict from each
    older version to a function turning that version's payload into the next version's)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    TYPE: ClassVar[str]
    VERSION: ClassVar[int]
    CASE: ClassVar[CaseType]
    UPCASTS: ClassVar[dict[int, Callable[[dict[str, Any]], dict[str, Any]]]]

    def __init_subclass__(cls, type: str | None = None, case: CaseType | None = None, version: int = 1,
                          upcasts: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] | None = None,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type is None:  # an intermediate base class
            return
        if not _TYPE.match(type):
            raise ValueError(f"event type {type!r} must be dotted lower-case words")
        if case is None:
            raise ValueError(f"event type {type!r} needs case=")
        if type in _EVENT_TYPES:
            raise ValueError(f"event type {type!r} is registered twice")
        missing = [v for v in range(1, version) if v not in (upcasts or {})]
        if missing:
            raise ValueError(f"event type {type!r} v{version} has no upcast from v{missing}")
        cls.TYPE, cls.VERSION, cls.CASE, cls.UPCASTS = type, version, case, dict(upcasts or {})
        _EVENT_TYPES[type] = cls
        case.events[type] = cls

    @classmethod
    def stored_type(cls) -> str:
        return cls.TYPE if cls.VERSION == 1 else f"{cls.TYPE}@{cls.VERSION}"

    def payload(self) -> dict[str, Any]:
        """The payload as stored: every declared field, in JSON types."""
        return self.model_dump(mode="json")

    def new_event(self) -> NewEvent:
        return NewEvent(self.stored_type(), self.payload())


def event_class(stored_type: str) -> type[EventBody] | None:
    return _EVENT_TYPES.get(stored_type.split("@", 1)[0])


def read_event(event: Event) -> EventBody:
    """A stored event as its class: older versions upcast step by step. Raises UnreadableEventError
    for a type no class declares or a payload its class does not accept."""
    name, _, v = event.type.partition("@")
    cls = _EVENT_TYPES.get(name)
    if cls is None:
        raise UnreadableEventError(f"event {event.seq} ({event.case_id} v{event.version}) has unknown type "
                                   f"{event.type!r}", "upgrade signoff, or register the event class")
    try:
        version = int(v) if v else 1
    except ValueError:
        version = 0
    if not 1 <= version <= cls.VERSION:
        raise UnreadableEventError(f"event {event.seq} has type {event.type!r}, newer than this signoff reads "
                                   f"(v{cls.VERSION})", "upgrade signoff")
    payload = event.payload
    for step in range(version, cls.VERSION):
        payload = cls.UPCASTS[step](dict(payload))
    try:
        return cls.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "payload"
        raise UnreadableEventError(f"event {event.seq} ({event.type}) does not match its class at {where}: "
                                   f"{first.get('msg')}", "the stored payload is kept as it is; fix the class "
                                   "(add the field, or an upcast) so that it reads every event written") from None


@dataclass(frozen=True)
class Stamp:
    """Where an event sits: what a fold may know besides the event's own fields."""

    case_id: str
    version: int
    seq: int
    recorded_at: str

    @classmethod
    def of(cls, event: Event) -> Stamp:
        return cls(event.case_id, event.version, event.seq, event.recorded_at)


# -- fold ---------------------------------------------------------------------------------------


class Fold(Generic[S]):
    """Handlers per event class that build a state `S` from a case's events, in order.

        fold = Fold[Bug](BUG)
        @fold.on(BugOpened)
        def _(bug: Bug, ev: BugOpened, at: Stamp) -> None: ...

    Handlers change the state they are given (states are plain dataclasses); `ignores` names event
    classes a state deliberately does not follow, so `missing()` can hold the fold to its case type.
    """

    def __init__(self, case: CaseType) -> None:
        self.case = case
        self._handlers: dict[type[EventBody], Callable[[S, Any, Stamp], None]] = {}
        self._ignored: set[type[EventBody]] = set()
        self._every: list[Callable[[S, EventBody, Stamp], None]] = []

    def on(self, *classes: type[E]) -> Callable[[Callable[[S, E, Stamp], None]], Callable[[S, E, Stamp], None]]:
        def register(handler: Callable[[S, E, Stamp], None]) -> Callable[[S, E, Stamp], None]:
            for cls in classes:
                if cls.CASE is not self.case:
                    raise ValueError(f"{cls.TYPE} belongs to {cls.CASE.name}, not {self.case.name}")
                if cls in self._handlers:
                    raise ValueError(f"{cls.TYPE} has two handlers")
                self._handlers[cls] = handler
            return handler
        return register

    def every(self, handler: Callable[[S, EventBody, Stamp], None]) -> Callable[[S, EventBody, Stamp], None]:
        """A handler run before the typed one for every event (a log, a version number)."""
        self._every.append(handler)
        return handler

    def ignores(self, *classes: type[EventBody]) -> None:
        self._ignored.update(classes)

    def missing(self) -> list[str]:
        """The event types of this case type that the fold neither handles nor ignores."""
        seen = set(self._handlers) | self._ignored
        return sorted(t for t, cls in self.case.events.items() if cls not in seen)

    def apply(self, state: S, body: EventBody, at: Stamp) -> S:
        for handler in self._every:
            handler(state, body, at)
        typed = self._handlers.get(type(body))
        if typed is not None:
            typed(state, body, at)
        return state

    def over(self, state: S, events: Iterable[Event]) -> S:
        """Fold stored events into `state` (read through their classes)."""
        for ev in events:
            self.apply(state, read_event(ev), Stamp.of(ev))
        return state


# -- decide and run -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What a pure decision returns: events to append and jobs to enqueue with them, atomically."""

    events: tuple[EventBody, ...] = ()
    jobs: tuple[NewJob, ...] = ()

    @classmethod
    def of(cls, *events: EventBody, jobs: Sequence[NewJob] = ()) -> Decision:
        return cls(tuple(events), tuple(jobs))

    @property
    def empty(self) -> bool:
        return not self.events and not self.jobs


NOTHING = Decision()


def decide_case(ledger: Ledger, fold: Fold[S], case_id: str, initial: Callable[[], S],
                decide: Callable[[S], Decision], idempotency_key: str | None = None) -> tuple[AppendResult, Decision]:
    """Read `case_id`, fold it onto `initial()`, call `decide(state)` (pure), and append what it decided
    at the version read; on a conflict read and decide again. Returns the append's result (`replayed`
    when the idempotency key was seen before) and the decision appended (the last one taken).
    Raises UnreadableEventError for a stored event no class reads, and ValueError for a decision that
    returns another case type's event; nothing is appended then."""
    taken: list[Decision] = []

    def step(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
        decision = decide(fold.over(initial(), history))
        for body in decision.events:
            if body.CASE is not fold.case:
                raise ValueError(f"a {fold.case.name} decision returned a {body.CASE.name} event ({body.TYPE})")
        taken[:] = [decision]
        return [b.new_event() for b in decision.events], list(decision.jobs)

    result = ledger.update(case_id, step, idempotency_key)
    return result, (taken[0] if taken else NOTHING)


class Cases(Generic[S]):
    """A case type's cases in a ledger: `load` folds one, `execute` runs a decision on it.

    `initial(key)` makes the empty state. `execute` reads the case, folds it, calls `decide(state)`
    (pure), appends what it decided at the version it read, and on a conflict reads and decides
    again; it returns the case's state after the decision.
    """

    def __init__(self, ledger: Ledger, fold: Fold[S], initial: Callable[[str], S]) -> None:
        self.ledger, self.fold, self.initial = ledger, fold, initial
        self.case = fold.case

    def load(self, key: str) -> S:
        return self.fold.over(self.initial(key), self.ledger.read(self.case.case_id(key)))

    def exists(self, key: str) -> bool:
        return self.ledger.version(self.case.case_id(key)) > 0

    def keys(self) -> list[str]:
        return [self.case.key_of(c) for c in self.ledger.case_ids(self.case.prefix)]

    def execute(self, key: str, decide: Callable[[S], Decision], idempotency_key: str | None = None) -> S:
        decide_case(self.ledger, self.fold, self.case.case_id(key), lambda: self.initial(key), decide, idempotency_key)
        # read again rather than fold the decision onto the state decided on: the fold sees each new
        # event's stamp (its time is the ledger's), and the state includes what others appended since
        return self.load(key)
