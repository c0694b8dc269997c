"""Loopback ports the suite must choose itself: for a third-party server that has to be told its port
(Synapse), for an address a third party must know before anything listens there (the bridge's push
address in Synapse's registration), and for an address where nothing listens. signoff's own servers
pick their port (`--port 0`) and print it: start them with tests/support/serve.serve."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
