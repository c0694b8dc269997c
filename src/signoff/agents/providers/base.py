"""The provider interface: what a provider is told (a role and a prompt) and what it answers.

A provider does not check proposals, keep budgets or write records; the Agent does all of that the
same way for every provider. Providers only speak their wire format and report honestly what they
know about the call: tokens, the model that answered, and whether it was billed.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from signoff.agents.prompt import Prompt
from signoff.agents.roles import RoleSpec
from signoff.kernel.errors import UnavailableError

# Outcomes a reply can have. `ok` still has to pass the role's checks.
OUTCOMES = ("ok", "refused", "truncated", "invalid_output")


@dataclass
class Reply:
    output: Any  # the parsed JSON the model produced (None when there is none)
    outcome: str = "ok"
    detail: str = ""
    model: str = ""  # the model the provider says answered
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int = 0
    attempts: int = 1
    raw_digest: str = ""  # sha256 of the raw response body, for the record


class CallFailed(UnavailableError):
    """No usable reply. `billed` says what we know about spend: "no" (the call certainly did not
    run: refused with 4xx/429/5xx or never connected), "unknown" (it may have run and been billed:
    timeout, dropped connection, cancelled mid-flight)."""

    def __init__(self, message: str, fix: str, billed: str, outcome: str = "error", attempts: int = 1) -> None:
        super().__init__(message, fix)
        self.billed = billed
        self.outcome = outcome
        self.attempts = attempts


@dataclass(frozen=True)
class Pricing:
    """USD per million tokens. Zero for a local server."""

    input_usd_per_mtok: float = 0.0
    output_usd_per_mtok: float = 0.0

    def micros(self, input_tokens: int, output_tokens: int) -> int:
        # USD per million tokens is exactly micro-USD per token; round up so a cap errs toward stopping.
        return math.ceil(input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok)


@dataclass(frozen=True)
class ProviderSettings:
    """One role's provider configuration, from `[agents.<role>]` in signoff.toml."""

    role: str
    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    max_output_tokens: int = 2048
    pricing: Pricing = field(default_factory=Pricing)
    timeout: float = 60.0
    max_retries: int = 3
    max_retry_wait: float = 30.0
    backoff_base: float = 0.5
    structured: str = "json_schema"
    script: str = "default"
    replay_path: str = ""
    record_path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    name: str
    model: str
    kind: str  # "simulated" or "advisory"
    metered: bool  # whether calls are reserved against the budget and rate limits

    def worst_case_micros(self, spec: RoleSpec, prompt: Prompt) -> int:
        """The most this call can cost, in micro-USD, before it starts."""
        ...

    def cost_micros(self, reply: Reply) -> int | None:
        """What this call cost, or None when the provider did not say (booked at worst case)."""
        ...

    def complete(self, spec: RoleSpec, prompt: Prompt, task: dict[str, Any], untrusted: dict[str, str],
                 cancel: threading.Event | None = None) -> Reply:
        """Ask for one output. Raises CallFailed when there is no reply to judge."""
        ...
