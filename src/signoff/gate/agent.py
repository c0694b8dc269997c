"""Which rooms agent asks: the rooms server's URL and the agent protocol's agent id and api key
(as `signoff rooms agent add` or `POST /agents` issue them)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from signoff.kernel.errors import UsageError
from signoff.rooms.client import HttpTransport, Transport

ENV_URL, ENV_AGENT, ENV_KEY = "SIGNOFF_ROOMS_URL", "SIGNOFF_AGENT_ID", "SIGNOFF_AGENT_KEY"


def rooms_url(url: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The rooms server's URL: `url`, else SIGNOFF_ROOMS_URL."""
    url = url or (os.environ if env is None else env).get(ENV_URL)
    if not url:
        raise UsageError("no rooms server URL", f"pass --url or set {ENV_URL} (the URL of `signoff serve`)")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"bad rooms URL {url!r}", "pass the URL of `signoff serve`, e.g. http://127.0.0.1:8787")
    return url.rstrip("/")


@dataclass(frozen=True)
class RoomsAgent:
    url: str
    agent_id: str
    key: str

    def __repr__(self) -> str:  # never print the key
        return f"RoomsAgent(url={self.url!r}, agent_id={self.agent_id!r})"

    @classmethod
    def resolve(cls, url: str | None = None, agent_id: str | None = None, key: str | None = None,
                env: Mapping[str, str] | None = None) -> RoomsAgent:
        """Explicit values first, then SIGNOFF_ROOMS_URL, SIGNOFF_AGENT_ID and SIGNOFF_AGENT_KEY."""
        env = os.environ if env is None else env
        url = url or env.get(ENV_URL)
        agent_id = agent_id or env.get(ENV_AGENT)
        key = key or env.get(ENV_KEY)
        missing = [name for name, value in ((ENV_URL, url), (ENV_AGENT, agent_id), (ENV_KEY, key)) if not value]
        if missing:
            raise UsageError(f"no rooms agent configured (missing {', '.join(missing)})",
                             "set SIGNOFF_ROOMS_URL, SIGNOFF_AGENT_ID and SIGNOFF_AGENT_KEY "
                             "(signoff rooms agent add NAME --owner USER prints the id and key)")
        assert url and agent_id and key
        return cls(rooms_url(url, env), agent_id, key)

    def transport(self) -> Transport:
        return HttpTransport(self.url, self.agent_id, self.key)
