"""What the two hosted providers share: worst-case pricing, the key, and strict JSON parsing of
text a model wrote."""

from __future__ import annotations

import json
import re
from typing import Any

from signoff.agents.config import api_key
from signoff.agents.prompt import Prompt
from signoff.agents.providers.base import ProviderSettings, Reply
from signoff.agents.roles import RoleSpec
from signoff.kernel.canonical import canonical_bytes

# Per message and request framing a server adds around the text (role markers, tool wrappers).
FRAMING_TOKENS = 256
_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n(.*)\n```\s*$", re.S)


class NotJson(ValueError):
    pass


def parse_json_text(text: str) -> Any:
    """Parse a model's JSON text strictly: one value, optionally in a ```json fence; no NaN or
    Infinity, no duplicate keys (which would let two readers see two different objects)."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()

    def no_constants(name: str) -> Any:
        raise NotJson(f"{name} is not JSON")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise NotJson(f"duplicate key {key!r}")
            out[key] = value
        return out

    try:
        return json.loads(stripped, parse_constant=no_constants, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise NotJson(f"not valid JSON ({exc.msg} at character {exc.pos} of {len(stripped)})") from exc


class HostedProvider:
    kind = "advisory"
    metered = True
    name = "hosted"

    def __init__(self, ps: ProviderSettings) -> None:
        self.ps = ps
        self.model = ps.model
        self.key = api_key(ps)
        # Cache writes can be billed above the base input price (Anthropic: 1.25x); reserve for it.
        self.input_multiplier = 1.0

    def worst_case_micros(self, spec: RoleSpec, prompt: Prompt) -> int:
        # One token per byte bounds byte-level BPE tokenizers from above; the schema is counted once
        # more because tool and response_format definitions carry it beside the system text.
        input_tokens = prompt.size + len(canonical_bytes(spec.schema)) + FRAMING_TOKENS
        worst_input = round(input_tokens * self.input_multiplier)
        return self.ps.pricing.micros(worst_input, self.ps.max_output_tokens)

    def cost_micros(self, reply: Reply) -> int | None:
        if reply.input_tokens is None or reply.output_tokens is None:
            return None
        return self.ps.pricing.micros(reply.input_tokens, reply.output_tokens)

    def headers(self) -> dict[str, str]:
        extra = self.ps.extra.get("headers", {})
        return {str(k): str(v) for k, v in extra.items()}


def text_reply(text: str | None, model: str) -> Reply:
    """A reply whose output is JSON text the model wrote (no structured channel)."""
    if text is None or not text.strip():
        return Reply(output=None, outcome="invalid_output", detail="the answer has no text", model=model)
    try:
        return Reply(output=parse_json_text(text), model=model)
    except NotJson as exc:
        return Reply(output=None, outcome="invalid_output", detail=f"the answer is {exc}", model=model)


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else {} (wire data is never trusted to have its shape)."""
    return value if isinstance(value, dict) else {}
