"""Wire details of the Switch agent protocol, revision 1: contract negotiation and SSE frames."""

from __future__ import annotations

import json
from typing import Any

from signoff import __version__

CONTRACT = "agent-protocol"
SPEAKS = 1
ACCEPTS = 1
SERVER_VERSION = f"signoff-rooms {__version__}"
HEARTBEAT_INTERVAL_SECONDS = 2.0
CONNECTION_HEADER = "X-Switch-Connection-Id"


class ProtocolMismatch(Exception):
    """The client's revision range does not overlap ours; `body` is the 409 detail."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(body["message"])
        self.body = body


def server_info() -> dict[str, Any]:
    return {"version": SERVER_VERSION, "contracts": {CONTRACT: {"speaks": SPEAKS, "accepts": ACCEPTS}}}


def negotiate(protocol: str | None, protocol_accepts: str | None) -> dict[str, Any]:
    """Admit a client whose [accepts, speaks] range overlaps ours; one that declares nothing is
    recorded as unknown and admitted."""
    if protocol is None and protocol_accepts is None:
        return {"speaks": None, "accepts": None}
    try:
        speaks = int(protocol) if protocol is not None else None
        accepts = int(protocol_accepts) if protocol_accepts is not None else speaks
    except ValueError as exc:
        raise ProtocolMismatch(_mismatch(None, None, f"protocol revisions must be integers ({exc})")) from exc
    if speaks is None:
        speaks = accepts
    assert speaks is not None and accepts is not None
    low, high = min(accepts, speaks), max(accepts, speaks)
    if high < ACCEPTS or low > SPEAKS:
        raise ProtocolMismatch(_mismatch(speaks, accepts, None))
    return {"speaks": speaks, "accepts": accepts}


def _mismatch(speaks: int | None, accepts: int | None, why: str | None) -> dict[str, Any]:
    message = why or (
        f"client speaks agent-protocol revisions {accepts}..{speaks}; this server speaks {ACCEPTS}..{SPEAKS}"
    )
    return {
        "message": message,
        "contract": CONTRACT,
        "server": {"version": SERVER_VERSION, "speaks": SPEAKS, "accepts": ACCEPTS},
        "client": {"speaks": speaks, "accepts": accepts},
        "remedy": (
            f"use a client that speaks agent-protocol revision {SPEAKS} "
            f"(protocol={SPEAKS}&protocol_accepts={ACCEPTS})"
        ),
    }


def frame(event: str, data: Any, id_: int | None = None) -> bytes:
    """One SSE frame; only real events carry `id:` (control frames do not)."""
    lines = []
    if id_ is not None:
        lines.append(f"id: {id_}")
    lines.append(f"event: {event}")
    lines.append("data: " + json.dumps(data, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


KEEPALIVE = b": keepalive\n\n"
