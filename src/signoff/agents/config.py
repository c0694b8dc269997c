"""Reading `[agents]` and `[agents.<role>]` from signoff.toml into limits and provider settings.

The provider of a role is whatever the file names, or `scripted` when it names none; it is never
chosen by trying one and falling back to another. Keys are read from the environment variable the
file names (`api_key_env`), never from the file itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from signoff.agents.providers.base import Pricing, ProviderSettings
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings

PROVIDERS = ("scripted", "replay", "openai", "anthropic")
PERIODS = ("day", "month", "total")
STRUCTURED = ("json_schema", "tool", "json_object", "prompt")
_DEFAULTS: dict[str, dict[str, Any]] = {
    "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY", "structured": "json_schema"},
    "anthropic": {"base_url": "https://api.anthropic.com", "api_key_env": "ANTHROPIC_API_KEY", "structured": "tool"},
}
# Conservative defaults for hosted models, so an unpriced role still reserves a real worst case.
# Set both to 0 for a local server.
DEFAULT_INPUT_USD_PER_MTOK = 3.0
DEFAULT_OUTPUT_USD_PER_MTOK = 15.0
_ROLE_KEYS = {"provider", "model", "base_url", "api_key_env", "max_output_tokens", "input_usd_per_mtok",
              "output_usd_per_mtok", "timeout", "max_retries", "max_retry_wait", "structured", "script", "path",
              "record_path", "headers", "backoff_base", "strict", "max_tokens_field", "temperature"}
_SECRET_KEYS = {"api_key", "key", "token", "secret", "password", "authorization"}


@dataclass(frozen=True)
class SpendLimits:
    """The agents' spend budget per period and call rate limits (`[agents]` in signoff.toml)."""

    budget_micros: int = 5_000_000
    period: str = "month"
    calls_per_hour: int = 60
    calls_per_client_per_hour: int = 10
    evidence_files: bool = True

    @property
    def budget_usd(self) -> float:
        return self.budget_micros / 1_000_000


def _number(table: str, key: str, value: Any, minimum: float = 0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise UsageError(f"[{table}] {key} must be a number >= {minimum}, got {value!r}", f"fix {key} in signoff.toml")
    return float(value)


def limits(settings: Settings) -> SpendLimits:
    raw = settings.section("agents")
    budget = _number("agents", "budget_usd", raw.get("budget_usd", 5.0))
    period = raw.get("budget_period", "month")
    if period not in PERIODS:
        raise UsageError(f"[agents] budget_period must be one of {', '.join(PERIODS)}, got {period!r}",
                         "fix budget_period in signoff.toml")
    per_hour = int(_number("agents", "calls_per_hour", raw.get("calls_per_hour", 60)))
    per_client = int(_number("agents", "calls_per_client_per_hour", raw.get("calls_per_client_per_hour", 10)))
    evidence = raw.get("evidence_files", True)
    if not isinstance(evidence, bool):
        raise UsageError("[agents] evidence_files must be true or false", "fix evidence_files in signoff.toml")
    return SpendLimits(round(budget * 1_000_000), period, per_hour, per_client, evidence)


def provider_settings(role: str, settings: Settings) -> ProviderSettings:
    raw = settings.section("agents", role)
    table = f"agents.{role}"
    secrets = sorted(k for k in raw if k.lower() in _SECRET_KEYS)
    if secrets:
        raise UsageError(f"[{table}] holds a secret ({', '.join(secrets)}); keys never live in files",
                         "remove it and name an environment variable instead: api_key_env = \"OPENAI_API_KEY\"")
    unknown = sorted(k for k in raw if k not in _ROLE_KEYS and not isinstance(raw[k], dict))
    if unknown:
        raise UsageError(f"[{table}] has unknown settings: {', '.join(unknown)}",
                         f"known settings: {', '.join(sorted(_ROLE_KEYS))}")
    provider = raw.get("provider", "scripted")
    if provider not in PROVIDERS:
        raise UsageError(f"[{table}] provider {provider!r} is not one of {', '.join(PROVIDERS)}",
                         "name the provider explicitly; signoff never falls back to another one")
    defaults = _DEFAULTS.get(provider, {})
    model = raw.get("model", "")
    if provider in ("openai", "anthropic") and (not isinstance(model, str) or not model):
        raise UsageError(f"[{table}] uses provider {provider!r} but names no model",
                         'add model = "..." (the exact model id the server serves)')
    structured = raw.get("structured", defaults.get("structured", "json_schema"))
    if structured not in STRUCTURED:
        raise UsageError(f"[{table}] structured must be one of {', '.join(STRUCTURED)}, got {structured!r}",
                         "use json_schema where the server supports it, prompt where it does not")
    tokens_field = raw.get("max_tokens_field", "max_tokens")
    if tokens_field not in ("max_tokens", "max_completion_tokens"):
        raise UsageError(f"[{table}] max_tokens_field must be max_tokens or max_completion_tokens",
                         "OpenAI's newer models want max_completion_tokens; most other servers max_tokens")
    temperature = raw.get("temperature", 0)
    if temperature != "server-default":
        temperature = _number(table, "temperature", temperature)
    headers = raw.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise UsageError(f"[{table}] headers must be a table of strings", "fix headers in signoff.toml")
    return ProviderSettings(
        role=role,
        provider=provider,
        model=str(model),
        base_url=str(raw.get("base_url", defaults.get("base_url", ""))).rstrip("/"),
        api_key_env=str(raw.get("api_key_env", defaults.get("api_key_env", ""))),
        max_output_tokens=int(_number(table, "max_output_tokens", raw.get("max_output_tokens", 2048), 1)),
        pricing=Pricing(
            _number(table, "input_usd_per_mtok", raw.get("input_usd_per_mtok", DEFAULT_INPUT_USD_PER_MTOK)),
            _number(table, "output_usd_per_mtok", raw.get("output_usd_per_mtok", DEFAULT_OUTPUT_USD_PER_MTOK)),
        ),
        timeout=_number(table, "timeout", raw.get("timeout", 60.0), 0.01),
        max_retries=int(_number(table, "max_retries", raw.get("max_retries", 3))),
        max_retry_wait=_number(table, "max_retry_wait", raw.get("max_retry_wait", 30.0)),
        backoff_base=_number(table, "backoff_base", raw.get("backoff_base", 0.5)),
        structured=str(structured),
        script=str(raw.get("script", "default")),
        replay_path=_path(settings, raw.get("path", "")),
        record_path=_path(settings, raw.get("record_path", "")),
        extra={"headers": dict(headers), "strict": bool(raw.get("strict", False)),
               "max_tokens_field": str(tokens_field), "temperature": temperature},
    )


def _path(settings: Settings, value: Any) -> str:
    if not value:
        return ""
    if not isinstance(value, str):
        raise UsageError(f"path setting {value!r} is not a string", "fix the path in signoff.toml")
    if os.path.isabs(value) or settings.config_path is None:
        return value
    return str(settings.config_path.parent / value)


def api_key(ps: ProviderSettings, env: dict[str, str] | None = None) -> str | None:
    """The key from the named environment variable; None when the role names none (a local server)."""
    if not ps.api_key_env:
        return None
    value = (env if env is not None else os.environ).get(ps.api_key_env)
    if not value:
        raise UsageError(f"role {ps.role} uses {ps.provider} with its key in ${ps.api_key_env}, which is not set",
                         f"export {ps.api_key_env}=..., or set api_key_env = \"\" for a server that needs no key")
    return value
