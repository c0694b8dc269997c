"""Any OpenAI-compatible chat-completions server: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio.

Structured output, by `structured`:
- json_schema: `response_format: {type: json_schema, json_schema: {name, schema, strict}}`
- tool: one function tool `propose` whose parameters are the schema, forced with `tool_choice`
- json_object: `response_format: {type: json_object}` (JSON mode, schema only in the prompt)
- prompt: nothing but the prompt, for servers with none of the above
Whatever the mode, the output is validated afterwards; structured output narrows what comes back,
it is not trusted to be right.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx

from signoff.agents.prompt import Prompt
from signoff.agents.providers.base import ProviderSettings, Reply
from signoff.agents.providers.hosted import (
    HostedProvider,
    NotJson,
    int_or_none,
    obj,
    parse_json_text,
    text_reply,
)
from signoff.agents.providers.http import post_json
from signoff.agents.roles import RoleSpec

TOOL_NAME = "propose"


class OpenAIProvider(HostedProvider):
    name = "openai"

    def __init__(self, ps: ProviderSettings, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(ps)
        self.transport = transport

    def request_body(self, spec: RoleSpec, prompt: Prompt) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.ps.model,
            "messages": [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}],
            str(self.ps.extra.get("max_tokens_field", "max_tokens")): self.ps.max_output_tokens,
        }
        if self.ps.extra.get("temperature", 0) != "server-default":
            body["temperature"] = self.ps.extra.get("temperature", 0)
        mode = self.ps.structured
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": spec.name, "description": spec.description or spec.name,
                "schema": spec.schema, "strict": bool(self.ps.extra.get("strict", False))}}
        elif mode == "tool":
            body["tools"] = [{"type": "function", "function": {
                "name": TOOL_NAME, "description": f"Submit the {spec.name} output.", "parameters": spec.schema}}]
            body["tool_choice"] = {"type": "function", "function": {"name": TOOL_NAME}}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def complete(self, spec: RoleSpec, prompt: Prompt, task: dict[str, Any], untrusted: dict[str, str],
                 cancel: threading.Event | None = None) -> Reply:
        headers = {"content-type": "application/json", **self.headers()}
        if self.key:
            headers["authorization"] = f"Bearer {self.key}"
        answer = post_json(self.ps, f"{self.ps.base_url}/chat/completions", headers,
                           self.request_body(spec, prompt), cancel, self.transport)
        reply = self.parse(answer.body)
        reply.attempts = answer.attempts
        reply.raw_digest = answer.raw_digest
        return reply

    def parse(self, body: dict[str, Any]) -> Reply:
        reply = self._choice(body)
        usage = obj(body.get("usage"))
        reply.input_tokens = int_or_none(usage.get("prompt_tokens"))
        reply.output_tokens = int_or_none(usage.get("completion_tokens"))
        reply.cached_input_tokens = int_or_none(obj(usage.get("prompt_tokens_details")).get("cached_tokens")) or 0
        return reply

    def _choice(self, body: dict[str, Any]) -> Reply:
        model = str(body.get("model") or self.ps.model)
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return Reply(None, "invalid_output", "the response has no choices", model)
        choice = choices[0]
        message = obj(choice.get("message"))
        finish = choice.get("finish_reason")
        refusal = message.get("refusal")
        if refusal:
            return Reply(None, "refused", f"the model refused: {str(refusal)[:300]}", model)
        if finish == "content_filter":
            return Reply(None, "refused", "the server's content filter stopped the answer", model)
        if finish == "length":
            return Reply(None, "truncated", "the answer hit max_output_tokens and was cut off", model)
        if self.ps.structured == "tool":
            return self._tool_output(message, model)
        content = message.get("content")
        if isinstance(content, list):  # content parts, as some servers answer
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict)
                              and p.get("type") in ("text", "output_text")) or None
        return text_reply(content if isinstance(content, str) else None, model)

    def _tool_output(self, message: dict[str, Any], model: str) -> Reply:
        calls = message.get("tool_calls")
        if not isinstance(calls, list) or not calls:
            return Reply(None, "invalid_output", "the answer called no tool", model)
        named = [c for c in calls if isinstance(c, dict) and isinstance(c.get("function"), dict)
                 and c["function"].get("name") == TOOL_NAME]
        if len(named) != 1:
            return Reply(None, "invalid_output", f"the answer must call {TOOL_NAME} exactly once", model)
        arguments = named[0]["function"].get("arguments")
        if not isinstance(arguments, str):
            return Reply(None, "invalid_output", "the tool call has no arguments text", model)
        try:
            return Reply(parse_json_text(arguments), model=model)
        except NotJson as exc:
            return Reply(None, "invalid_output", f"the tool arguments are {exc}", model)
