"""The application-service registration: the file the homeserver is given
(`app_service_config_files`) so that it admits the bridge, with the tokens both sides use and the
user namespace of the agents' puppets. It is JSON, which is YAML too, so Synapse reads it as it is."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mautrix.types import UserID

from signoff.kernel.errors import UsageError
from signoff.kernel.ids import new_token

LOCALPART = re.compile(r"[a-z0-9._=/-]+\Z")
_DOMAIN = re.compile(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?\Z")
PREFIX_KEY = "org.signoff.puppet_prefix"
DOMAIN_KEY = "org.signoff.domain"


@dataclass(frozen=True)
class Registration:
    id: str
    as_token: str
    hs_token: str
    sender_localpart: str
    puppet_prefix: str
    domain: str
    url: str | None = None  # where the homeserver pushes transactions

    @property
    def bot(self) -> UserID:
        return UserID(f"@{self.sender_localpart}:{self.domain}")

    def document(self) -> dict[str, Any]:
        """The registration as the homeserver reads it (`app_service_config_files`)."""
        return {
            "id": self.id, "url": self.url, "as_token": self.as_token, "hs_token": self.hs_token,
            "sender_localpart": self.sender_localpart, "rate_limited": False,
            "namespaces": {"users": [{"exclusive": True, "regex": f"@{re.escape(self.puppet_prefix)}"
                                      f"[a-z0-9._=/-]+:{re.escape(self.domain)}"}], "aliases": [], "rooms": []},
            PREFIX_KEY: self.puppet_prefix, DOMAIN_KEY: self.domain,
        }

    def write(self, path: Path) -> None:
        """Write the file readable by its owner only: it holds both tokens."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(self.document(), indent=2) + "\n")


def generate(domain: str, url: str, sender_localpart: str = "signoff", puppet_prefix: str = "signoff_",
             id_: str = "signoff") -> Registration:
    for what, value, rule in (("bot localpart", sender_localpart, LOCALPART), ("puppet prefix", puppet_prefix,
                                                                                 LOCALPART),
                              ("domain", domain, _DOMAIN)):
        if not isinstance(value, str) or not value or len(value) > 100 or not rule.match(value):
            raise UsageError(f"{value!r} is not a valid {what}",
                             "use lowercase letters, digits and . _ = / - (a domain: the homeserver's server_name)")
    if not re.match(r"https?://[^\s/]+(/\S*)?\Z", url):
        raise UsageError(f"{url!r} is not an http(s) URL", "pass where the bridge listens, e.g. http://127.0.0.1:29330")
    if sender_localpart.startswith(puppet_prefix):
        raise UsageError("the bot's localpart must not start with the puppet prefix",
                         "pick another --bot or --puppet-prefix")
    return Registration(id_, new_token(32), new_token(32), sender_localpart, puppet_prefix, domain, url)


def load(path: Path) -> Registration:
    try:
        data = json.loads(path.read_text())
        return Registration(str(data["id"]), str(data["as_token"]), str(data["hs_token"]),
                            str(data["sender_localpart"]), str(data[PREFIX_KEY]), str(data[DOMAIN_KEY]),
                            str(data["url"]) if data.get("url") else None)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path} is not a registration file written by signoff ({type(exc).__name__}: {exc})",
                         "write one with `signoff bridge matrix registration`") from exc
