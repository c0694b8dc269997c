"""Which people and agents only act out a script (the demo's): the pages label what they decided
"simulated" (design rule 6). The entry point that starts the server names them
(`app.state.simulated_people`, set by `signoff serve --demo`); a server that names none labels nobody."""

from __future__ import annotations

from fastapi import Request

from signoff.web.render import templates


def simulated(request: Request, name: object) -> bool:
    """Whether `name` (a person's or agent's name as a page shows it) acts out a script."""
    scripted: frozenset[str] = getattr(request.app.state, "simulated_people", frozenset())
    return isinstance(name, str) and name in scripted


templates.globals["simulated"] = simulated
