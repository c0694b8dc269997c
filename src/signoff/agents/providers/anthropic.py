"""The Anthropic Messages API (`POST /v1/messages`).

Structured output goes through one tool, `propose`, whose `input_schema` is the role's schema,
forced with `tool_choice: {type: tool}`; the proposal is the `input` of the `tool_use` block. The
fixed system text is sent as a block marked `cache_control: ephemeral` so repeated calls reuse the
provider's prompt cache. With structured = "prompt" the answer is JSON text instead.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx

from signoff.agents.prompt import Prompt
from signoff.agents.providers.base import ProviderSettings, Reply
from signoff.agents.providers.hosted import HostedProvider, int_or_none, obj, text_reply
from signoff.agents.providers.http import post_json
from signoff.agents.roles import RoleSpec

API_VERSION = "2023-06-01"
TOOL_NAME = "propose"


class AnthropicProvider(HostedProvider):
    name = "anthropic"

    def __init__(self, ps: ProviderSettings, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(ps)
        self.transport = transport
        self.input_multiplier = 1.25

    def request_body(self, spec: RoleSpec, prompt: Prompt) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.ps.model,
            "max_tokens": self.ps.max_output_tokens,
            "system": [{"type": "text", "text": prompt.system, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": prompt.user}],
        }
        if self.ps.extra.get("temperature", 0) != "server-default":
            body["temperature"] = self.ps.extra.get("temperature", 0)
        if self.ps.structured != "prompt":
            body["tools"] = [{"name": TOOL_NAME, "description": f"Submit the {spec.name} output.",
                              "input_schema": spec.schema}]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        return body

    def complete(self, spec: RoleSpec, prompt: Prompt, task: dict[str, Any], untrusted: dict[str, str],
                 cancel: threading.Event | None = None) -> Reply:
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION, **self.headers()}
        if self.key:
            headers["x-api-key"] = self.key
        answer = post_json(self.ps, f"{self.ps.base_url}/v1/messages", headers, self.request_body(spec, prompt),
                           cancel, self.transport)
        reply = self.parse(answer.body)
        reply.attempts = answer.attempts
        reply.raw_digest = answer.raw_digest
        return reply

    def cost_micros(self, reply: Reply) -> int | None:
        if reply.input_tokens is None or reply.output_tokens is None:
            return None
        return self.ps.pricing.micros(reply.input_tokens, reply.output_tokens)

    def parse(self, body: dict[str, Any]) -> Reply:
        model = str(body.get("model") or self.ps.model)
        usage = obj(body.get("usage"))
        plain = int_or_none(usage.get("input_tokens"))
        written = int_or_none(usage.get("cache_creation_input_tokens")) or 0
        read = int_or_none(usage.get("cache_read_input_tokens")) or 0
        # input_tokens counts only uncached input; cache writes are billed at 1.25x, reads at 0.1x.
        # We charge reads at the full input price: the budget errs toward stopping.
        input_tokens = None if plain is None else plain + round(written * 1.25) + read
        output_tokens = int_or_none(usage.get("output_tokens"))
        reply = self._content(body, model)
        reply.input_tokens = input_tokens
        reply.output_tokens = output_tokens
        reply.cached_input_tokens = read
        return reply

    def _content(self, body: dict[str, Any], model: str) -> Reply:
        if body.get("type") not in (None, "message"):
            return Reply(None, "invalid_output", f"the response is of type {body.get('type')!r}, not message", model)
        stop = body.get("stop_reason")
        if stop == "refusal":
            return Reply(None, "refused", "the model refused (stop_reason refusal)", model)
        if stop == "max_tokens":
            return Reply(None, "truncated", "the answer hit max_tokens and was cut off", model)
        content = body.get("content")
        if not isinstance(content, list):
            return Reply(None, "invalid_output", "the response has no content list", model)
        blocks = [b for b in content if isinstance(b, dict)]
        if self.ps.structured == "prompt":
            texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
            return text_reply("".join(texts) if texts else None, model)
        uses = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == TOOL_NAME]
        if len(uses) != 1:
            said = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()
            detail = f"the answer must call {TOOL_NAME} exactly once, it called it {len(uses)} times"
            return Reply(None, "invalid_output", detail + (f"; it said: {said[:200]}" if said else ""), model)
        return Reply(uses[0].get("input"), model=model)
