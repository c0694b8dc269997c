"""Bridges: connect signoff rooms to the chat people already use (a face, like the CLI: it parses,
relays through the rooms client and renders; policies and ids stay the rooms server's)."""
