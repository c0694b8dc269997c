"""The Agent: one role bound to one explicitly configured provider, with every call checked,
metered and recorded the same way whichever provider answers."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signoff.agents import config
from signoff.agents.budget import Budget
from signoff.agents.prompt import Prompt, build_prompt
from signoff.agents.proposal import Proposal, ProposalRejected, check_output
from signoff.agents.providers.base import CallFailed, Provider, ProviderSettings, Reply
from signoff.agents.providers.scripted import ReplayProvider, ScriptedProvider, append_recording
from signoff.agents.record import EVENT_TYPE, case_for, record_call
from signoff.agents.roles import RoleSpec, get_role
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import SignoffError, UsageError
from signoff.kernel.ids import new_id
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger

if TYPE_CHECKING:  # the HTTP providers are imported only when configured
    from signoff.agents.providers.anthropic import AnthropicProvider
    from signoff.agents.providers.openai import OpenAIProvider

_LEDGERS: dict[str, SqlLedger] = {}
_LEDGERS_LOCK = threading.Lock()


def shared_ledger(settings: Settings) -> SqlLedger:
    """One Ledger per database for agents created without one, so calling agent_for per proposal
    does not open a new connection pool each time."""
    with _LEDGERS_LOCK:
        ledger = _LEDGERS.get(settings.db_url)
        if ledger is None:
            ledger = _LEDGERS[settings.db_url] = SqlLedger.open(settings)
        return ledger


def attempts(ledger: SqlLedger, role: str, case_id: str | None = None) -> dict[str, int]:
    """How many recorded calls of `role` (for `case_id`, when given) ended in each outcome, e.g.
    {"ok": 1, "rejected": 2}; a workflow uses it to cap failed attempts before asking a person."""
    counts: dict[str, int] = {}
    for event in ledger.read(case_for(role)):
        record = event.payload.get("record", {})
        if event.type == EVENT_TYPE and (case_id is None or record.get("case_id") == case_id):
            outcome = str(record.get("outcome"))
            counts[outcome] = counts.get(outcome, 0) + 1
    return counts


_ProviderClass = type[ScriptedProvider] | type[ReplayProvider] | type["OpenAIProvider"] | type["AnthropicProvider"]


def _provider_class(name: str) -> _ProviderClass:
    if name == "scripted":
        return ScriptedProvider
    if name == "replay":
        return ReplayProvider
    if name == "openai":
        from signoff.agents.providers.openai import OpenAIProvider

        return OpenAIProvider
    if name == "anthropic":
        from signoff.agents.providers.anthropic import AnthropicProvider

        return AnthropicProvider
    raise UsageError(f"unknown provider {name!r}", f"use one of {', '.join(config.PROVIDERS)}")


@dataclasses.dataclass(frozen=True)
class ProviderTraits:
    kind: str  # the evidence kind of its outputs: "simulated" or "advisory"
    metered: bool  # a hosted model: calls are reserved against the budget and rate limits


def provider_traits(name: str) -> ProviderTraits:
    """What provider `name` declares about itself, without configuring one (no key is needed)."""
    cls = _provider_class(name)
    return ProviderTraits(cls.kind, cls.metered)


def make_provider(ps: ProviderSettings) -> Provider:
    cls = _provider_class(ps.provider)
    if issubclass(cls, ScriptedProvider):
        return cls(ps.script)
    if issubclass(cls, ReplayProvider):
        return cls(ps.replay_path)
    return cls(ps)


def agent_for(role: str, settings: Settings, ledger: SqlLedger | None = None, script: str = "default") -> Agent:
    """The agent for `role` as signoff.toml configures it (`[agents.<role>] provider = ...`); scripted
    when the file names no provider. `script` picks a registered script when the role is scripted and
    the file does not name one."""
    spec = get_role(role)
    ps = config.provider_settings(role, settings)
    if ps.provider == "scripted" and "script" not in settings.section("agents", role):
        ps = dataclasses.replace(ps, script=script)
    return Agent(spec, make_provider(ps), settings, ledger, config.limits(settings), ps)


class Agent:
    def __init__(self, spec: RoleSpec, provider: Provider, settings: Settings, ledger: SqlLedger | None = None,
                 limits: config.SpendLimits | None = None, provider_settings: ProviderSettings | None = None) -> None:
        self.spec = spec
        self.provider = provider
        self.settings = settings
        self._ledger = ledger
        self.limits = limits or config.limits(settings)
        self.provider_settings = provider_settings

    @property
    def role(self) -> str:
        return self.spec.name

    @property
    def ledger(self) -> SqlLedger:
        if self._ledger is None:
            self._ledger = shared_ledger(self.settings)
        return self._ledger

    @property
    def budget(self) -> Budget:
        return Budget(self.ledger, self.limits)

    def propose(
        self,
        task: dict[str, Any],
        untrusted: dict[str, str] | None = None,
        client: str = "default",
        *,
        case_id: str | None = None,
        allowed_paths: list[str] | None = None,
        denied_paths: list[str] | None = None,
        root: Path | None = None,
        cancel: threading.Event | None = None,
    ) -> Proposal:
        """Ask the role's provider for one proposal.

        `task` is trusted structured input; `untrusted` outside text, inserted only as delimited data.
        `allowed_paths` replaces the role's allowlist for this call, `denied_paths` adds to its deny
        list, `root` is the tree the output would be applied to (symlinks in it are refused).
        Raises ProposalRejected (the output failed a check; a failed attempt), BudgetExceeded (a
        limit refused the call before it started) or CallFailed (no reply).
        """
        if not isinstance(client, str) or not client or len(client) > 200:
            raise UsageError("client must be a name of 1 to 200 characters", "pass client=\"<who asked>\"")
        untrusted = dict(untrusted or {})
        prompt = build_prompt(self.spec, task, untrusted)
        call_id = new_id()
        provider = self.provider
        worst = provider.worst_case_micros(self.spec, prompt) if provider.metered else 0
        base: dict[str, Any] = {
            "call_id": call_id, "role": self.role, "provider": provider.name, "model": provider.model,
            "kind": provider.kind, "client": client, "case_id": case_id, "prompt_digest": prompt.digest,
            "reserved_usd": worst / 1e6,
        }
        if provider.metered:
            self.budget.reserve(call_id, client, self.role, provider.name, provider.model, worst)
        started = time.monotonic()
        try:
            reply = provider.complete(self.spec, prompt, task, untrusted, cancel)
        except CallFailed as exc:
            charged = worst if exc.billed != "no" else 0
            self._settle(call_id, charged, "unknown" if exc.billed != "no" else "released")
            self._record(base, started, outcome=exc.outcome, reason=exc.message, cost=charged,
                         attempts=exc.attempts)
            raise
        except BaseException as exc:
            # Anything else mid-call (a bug, KeyboardInterrupt): we cannot know whether it was billed.
            self._settle(call_id, worst, "unknown")
            reason = exc.message if isinstance(exc, SignoffError) else f"{type(exc).__name__}: {exc}"
            self._record(base, started, outcome="error", reason=reason, cost=worst)
            raise
        cost = provider.cost_micros(reply)
        self._settle(call_id, worst if cost is None else cost, "unknown" if cost is None else "settled")
        charged = worst if cost is None else cost
        if reply.outcome != "ok":
            record = self._record(base, started, reply=reply, outcome=reply.outcome, reason=reply.detail,
                                  cost=charged, output=reply.output)
            raise ProposalRejected(f"{reply.outcome}: {reply.detail}", record)
        try:
            output = check_output(self.spec, reply.output, allowed_paths, denied_paths, root)
        except ProposalRejected as rejected:
            rejected.record = self._record(base, started, reply=reply, outcome="rejected",
                                           reason=rejected.reason, cost=charged, output=reply.output)
            raise
        record = self._record(base, started, reply=reply, outcome="ok", reason="", cost=charged, output=output)
        ps = self.provider_settings
        if ps is not None and ps.record_path:
            append_recording(Path(ps.record_path), self.role, prompt, output, reply.model or provider.model)
        return Proposal(self.role, output, provider.name, reply.model or provider.model, provider.kind, record)

    def prompt_for(self, task: dict[str, Any], untrusted: dict[str, str] | None = None) -> Prompt:
        """The exact prompt a call would send (for inspection and for recording fixtures)."""
        return build_prompt(self.spec, task, untrusted)

    def _settle(self, call_id: str, charged: int, status: str) -> None:
        if self.provider.metered:
            self.budget.settle(call_id, charged, status)

    def _record(self, base: dict[str, Any], started: float, *, outcome: str, reason: str, cost: int,
                reply: Reply | None = None, output: Any = None, attempts: int | None = None) -> dict[str, Any]:
        try:
            output_digest = canonical_digest(output) if output is not None else None
        except SignoffError:
            output_digest = None
        record = {
            **base,
            "model": (reply.model if reply is not None and reply.model else base["model"]),
            "output_digest": output_digest,
            "tokens": {
                "input": reply.input_tokens if reply else None,
                "output": reply.output_tokens if reply else None,
                "cached_input": reply.cached_input_tokens if reply else 0,
            },
            "cost_usd": cost / 1e6,
            "duration": round(time.monotonic() - started, 3),
            "attempts": attempts if attempts is not None else (reply.attempts if reply else 1),
            "response_digest": (reply.raw_digest or None) if reply is not None else None,
            "outcome": outcome,
            "reason": reason[:1000],
        }
        return record_call(self.settings, self.ledger, record, output, self.limits.evidence_files)
