"""`gate`: run a function (or a block) only after a person approved exactly its arguments.

    @gate(approvers=["alice"], room="ops")
    def deploy(service: str, version: str) -> None: ...

    async with gate(approvers=["alice"], room="ops").approval("rotate-keys", {"scope": "prod"}):
        ...

Each call asks anew: the card binds the digest of the call's canonical arguments (RFC 8785) and a
fresh nonce, so a "yes" for one call never approves another, and a "yes" for other arguments never
approves these. The arguments are canonicalised again just before the body runs; if they changed
while the person was deciding, the call is refused.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Literal, TypeVar, cast

from signoff.gate.agent import RoomsAgent
from signoff.gate.approvals import Approvals, run_sync
from signoff.gate.record import record_decision
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.rooms.domain.bound import CardDecision, check_question, content_digest

F = TypeVar("F", bound=Callable[..., Any])
TimeoutPolicy = Literal["raise", "refuse"]


class GateRefused(RefusedError):
    """The person said no (or, with on_timeout="refuse", nobody said yes in time)."""

    def __init__(self, message: str, decision: CardDecision, record: dict[str, Any]) -> None:
        super().__init__(message, "ask again with arguments the approver accepts")
        self.decision = decision
        self.record = record


class GateTimeout(RefusedError):
    """Nobody answered in time (on_timeout="raise"); the function did not run."""

    def __init__(self, message: str, decision: CardDecision, record: dict[str, Any]) -> None:
        super().__init__(message, "ask again, or raise the timeout")
        self.decision = decision
        self.record = record


def call_content(action: str, arguments: Mapping[str, Any]) -> str:
    """The exact text a person approves for a call: canonical JSON of the action and its arguments."""
    try:
        return canonical_text({"action": action, "arguments": dict(arguments)})
    except (UsageError, TypeError, ValueError) as exc:
        raise UsageError(f"the arguments of {action} are not plain JSON values: {exc}",
                         "gate functions whose arguments are str, int, bool, None, lists and dicts") from exc


class Gate:
    def __init__(self, approvers: list[str], room: str, *, question: str | None = None, timeout: float = 300.0,
                 on_timeout: TimeoutPolicy = "raise", agent: RoomsAgent | None = None,
                 settings: Settings | None = None) -> None:
        if not isinstance(approvers, list) or not approvers or not all(isinstance(a, str) and a for a in approvers):
            raise UsageError("gate needs approvers: a list of people's names (or role:NAME)",
                             'pass approvers=["alice"] or ["role:dba"]')
        if on_timeout not in ("raise", "refuse"):
            raise UsageError(f"bad on_timeout {on_timeout!r}", 'pass on_timeout="raise" or "refuse"')
        if question is not None:
            check_question(question)
        self.approvers = list(approvers)
        self.room = room
        self.question = question
        self.timeout = float(timeout)
        self.on_timeout: TimeoutPolicy = on_timeout
        self._agent = agent
        self._settings = settings

    def _resolved(self) -> tuple[RoomsAgent, Settings]:
        agent = self._agent or RoomsAgent.resolve()
        return agent, self._settings or Settings.load()

    async def acheck(self, action: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Ask, wait, sign and record; returns the record if approved, raises otherwise."""
        if not isinstance(action, str) or not action or "\n" in action:
            raise UsageError("an action name is one non-empty line", "pass e.g. 'deploy'")
        content = call_content(action, arguments)
        digest = content_digest(content)
        agent, settings = self._resolved()
        approvals = Approvals(agent.transport)
        card = await approvals.request(self.room, self.question or f"Run {action} with these arguments?",
                                       content, self.approvers, expires_in=self.timeout)
        decision = await approvals.wait(str(card["request_id"]), self.timeout, content)
        if decision.approved:
            return record_decision(settings, action, digest, decision, "approved", agent.url)
        if decision.state in ("pending", "expired") and self.on_timeout == "raise":
            record = record_decision(settings, action, digest, decision, "timed_out", agent.url)
            raise GateTimeout(f"{action}: no answer from {', '.join(self.approvers)} within {self.timeout:g} s",
                              decision, record)
        record = record_decision(settings, action, digest, decision, "refused", agent.url)
        raise GateRefused(f"{action} was not approved: {decision.reason or decision.state}", decision, record)

    def record_changed(self, record: dict[str, Any]) -> dict[str, Any]:
        agent, settings = self._resolved()
        return record_decision(settings, record["action"], record["arguments_sha256"], record["decision"],
                               "arguments_changed", agent.url)

    def check(self, action: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], run_sync(self.acheck(action, arguments)))

    def approval(self, action: str, arguments: Mapping[str, Any]) -> GatedBlock:
        """A context manager (sync and async) whose body runs only after approval."""
        return GatedBlock(self, action, arguments)

    def __call__(self, fn: F) -> F:
        action = f"{fn.__module__}.{fn.__qualname__}"
        signature = inspect.signature(fn)

        def bound(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
            b = signature.bind(*args, **kwargs)
            b.apply_defaults()
            return dict(b.arguments)

        def unchanged(approved: str, record: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            # Compared as text taken before asking: the arguments are the caller's live objects.
            if call_content(action, bound(args, kwargs)) != approved:
                self.record_changed(record)
                raise RefusedError(f"the arguments of {action} changed after they were approved",
                                   "do not mutate arguments while an approval is pending")

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                arguments = bound(args, kwargs)
                approved = call_content(action, arguments)
                record = await self.acheck(action, arguments)
                unchanged(approved, record, args, kwargs)
                return await fn(*args, **kwargs)

            return cast(F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            arguments = bound(args, kwargs)
            approved = call_content(action, arguments)
            record = self.check(action, arguments)
            unchanged(approved, record, args, kwargs)
            return fn(*args, **kwargs)

        return cast(F, wrapper)


class GatedBlock:
    def __init__(self, gate: Gate, action: str, arguments: Mapping[str, Any]) -> None:
        self.gate = gate
        self.action = action
        self.arguments = dict(arguments)
        self.record: dict[str, Any] | None = None

    def __enter__(self) -> dict[str, Any]:
        self.record = self.gate.check(self.action, self.arguments)
        return self.record

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        return None

    async def __aenter__(self) -> dict[str, Any]:
        self.record = await self.gate.acheck(self.action, self.arguments)
        return self.record

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        return None


def gate(approvers: list[str], room: str, *, question: str | None = None, timeout: float = 300.0,
         on_timeout: TimeoutPolicy = "raise", agent: RoomsAgent | None = None,
         settings: Settings | None = None) -> Gate:
    """A gate: use it as `@gate(...)` on a function, or `with gate(...).approval(action, args):`."""
    return Gate(approvers, room, question=question, timeout=timeout, on_timeout=on_timeout, agent=agent,
                settings=settings)
