"""Web settings: `[web]` in signoff.toml."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from signoff.incident.service import ORG_KEY
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.kernel.wire import UNIX_PEER


@dataclass(frozen=True)
class WebConfig:
    session_hours: float = 12.0  # a session ends this long after sign-in, whatever happens
    signin_attempts: int = 5  # failed sign-ins allowed per window, per client address and per name
    signin_window_minutes: int = 15
    incident_tries_per_minute: int = 10  # "try to break it" tries per client address, per process
    # room user name -> the one company whose view of an incident that person may open
    incident_views: dict[str, str] = field(default_factory=dict)
    # The former name of `[notes] deciders` (who may decide on release notes), still accepted here;
    # the notes service reads it and holds every face to it, the pages included.
    notes_deciders: tuple[str, ...] = ()
    # Addresses (or networks) of the reverse proxies whose X-Forwarded-For / -Proto `signoff serve`
    # believes. None by default: a client's address is the peer's, whatever headers it sends.
    trusted_proxies: tuple[str, ...] = ()

    @classmethod
    def load(cls, settings: Settings | None) -> WebConfig:
        section = settings.section("web") if settings is not None else {}
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(section) - known)
        if unknown:
            raise UsageError(f"unknown [web] setting(s): {', '.join(unknown)}", f"use only: {', '.join(sorted(known))}")
        deciders = section.get("notes_deciders", [])
        if not isinstance(deciders, list) or not all(isinstance(d, str) and d for d in deciders):
            raise UsageError("[web] notes_deciders must be a list of room user names", 'e.g. ["alice", "bob"]')
        proxies = section.get("trusted_proxies", [])
        if not isinstance(proxies, list) or not all(isinstance(p, str) and (p == UNIX_PEER or _network(p))
                                                    for p in proxies):
            raise UsageError("[web] trusted_proxies must be a list of IP addresses or networks, or \"unix\"",
                             'e.g. trusted_proxies = ["10.0.0.5", "10.1.0.0/16"], or ["unix"] for a proxy on '
                             "`signoff serve --unix-socket`, or leave it out to trust none")
        cfg = cls(**{**section, "notes_deciders": tuple(deciders), "trusted_proxies": tuple(proxies)})
        if not 0 < cfg.session_hours <= 24 * 30:
            raise UsageError("[web] session_hours must be above 0 and at most 720", "the default is 12")
        if not 1 <= cfg.signin_attempts <= 100 or not 1 <= cfg.signin_window_minutes <= 24 * 60:
            raise UsageError("[web] signin_attempts is 1-100 and signin_window_minutes 1-1440",
                             "the defaults are 5 and 15")
        if not 1 <= cfg.incident_tries_per_minute <= 1000:
            raise UsageError("[web] incident_tries_per_minute must be 1-1000", "the default is 10")
        views = cfg.incident_views
        if not isinstance(views, dict) or not all(isinstance(k, str) and isinstance(v, str) and ORG_KEY.match(v)
                                                  for k, v in views.items()):
            raise UsageError("[web] incident_views maps user names to a company",
                             'write it as incident_views = { alice = "payco", "ines.alves" = "kestrel" } (quote a '
                             "name with a dot: TOML reads ines.alves unquoted as a table), with the key of the "
                             "organisation the person belongs to")
        return cfg


def _network(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return True
