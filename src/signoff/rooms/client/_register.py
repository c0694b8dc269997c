"""Registering an agent on any Switch-protocol server (signoff's own or a Switch core).

One body serves both: a Switch core validates `connector_type` and the whole `integration_profile`
strictly (a bare `{name, description}` gets 422), and signoff's server accepts and stores the same
fields. Re-registering with `overwrite=True` rotates the key on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from signoff.kernel.errors import UnavailableError, UsageError
from signoff.kernel.tls import tls_context
from signoff.kernel.wire import error_of

CONNECTOR_TYPE = "signoff"


def integration_profile(connection_model: str = "always_on", can_delegate: bool = False,
                        can_accept: bool = False) -> dict[str, Any]:
    """The full profile a Switch core requires. A third-party client that keeps its stream open
    registers as `always_on` (status reporting on Switch still branches on it)."""
    if connection_model not in ("always_on", "auto_session", "session_addressable", "session_passive"):
        raise UsageError(f"unknown connection model {connection_model!r}",
                         "use always_on, auto_session, session_addressable or session_passive")
    return {
        "connection_model": connection_model, "message_exchange": True,
        "pre_invocation_mediation": [], "post_invocation_mediation": [], "event_reporting": [],
        "task_protocol": {"can_delegate": can_delegate, "can_accept": can_accept},
        "command_capabilities": {"reset": "unsupported", "compact": "unsupported", "interrupt": "unsupported"},
    }


def registration_body(name: str, description: str, *, overwrite: bool = False,
                      connection_model: str = "always_on") -> dict[str, Any]:
    return {"name": name, "description": description or name, "connector_type": CONNECTOR_TYPE,
            "integration_profile": integration_profile(connection_model), "overwrite": overwrite}


@dataclass(frozen=True)
class Registered:
    agent_id: str
    api_key: str


def register_agent(base_url: str, registration_key: str, name: str, description: str = "", *,
                   overwrite: bool = False, connection_model: str = "always_on",
                   http: httpx.Client | None = None) -> Registered:
    """`POST /agents` with the body every server accepts; returns the agent id and its key."""
    base = base_url.rstrip("/")
    client = http or httpx.Client(timeout=30.0, verify=tls_context())
    try:
        response = client.post(f"{base}/agents", json=registration_body(
            name, description, overwrite=overwrite, connection_model=connection_model),
            headers={"Authorization": f"Bearer {registration_key}"})
    except httpx.TransportError as exc:
        raise UnavailableError(f"cannot reach {base}: {exc!r}", "is the rooms server running?") from exc
    finally:
        if http is None:
            client.close()
    if response.status_code >= 400:
        raise error_of(response, f"POST {base}/agents", "check the registration key and the agent name")
    body = response.json()
    return Registered(agent_id=str(body["id"]), api_key=str(body["api_key"]))
