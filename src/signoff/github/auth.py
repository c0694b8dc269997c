"""Credentials for GitHub's REST API: a fine-grained (or classic) token, or a GitHub App.

An App authenticates as itself with a short-lived RS256 JWT (issued at now - 60 s to allow for clock
drift, expiring within GitHub's 10-minute limit) and exchanges it for an installation token, which
expires after an hour. The installation token is cached and replaced a few minutes before it
expires, so a long job never sends one that lapses mid-request.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import httpx
import jwt

from signoff.kernel.clock import Clock, SystemClock
from signoff.kernel.errors import RefusedError, UnavailableError, UsageError

JWT_LIFETIME = 540  # seconds; GitHub refuses more than 600
REFRESH_MARGIN = 300  # replace an installation token this long before it expires


class Auth(Protocol):
    def header(self, client: httpx.Client, base_url: str) -> str:
        """The Authorization header value for the next request."""
        ...

    def git_token(self, client: httpx.Client, base_url: str) -> str:
        """The token a `git push` over HTTPS presents as the password of `x-access-token`."""
        ...


@dataclass(frozen=True)
class TokenAuth:
    """A personal access token (fine-grained tokens are the recommended kind)."""

    token: str

    def __post_init__(self) -> None:
        if not self.token or any(c.isspace() for c in self.token):
            raise UsageError("the GitHub token is empty or contains spaces", "set [github] token to the token itself")

    def header(self, client: httpx.Client, base_url: str) -> str:
        return f"Bearer {self.token}"

    def git_token(self, client: httpx.Client, base_url: str) -> str:
        return self.token


class AppAuth:
    """A GitHub App installation: JWT from the App's private key, exchanged for installation tokens."""

    def __init__(self, app_id: str, private_key_pem: str, installation_id: int, clock: Clock | None = None) -> None:
        if not str(app_id).strip():
            raise UsageError("the GitHub App id is empty", "set [github] app_id (the App's id or client id)")
        if "PRIVATE KEY" not in private_key_pem:
            raise UsageError("the GitHub App private key is not a PEM key",
                             "download the key from the App's settings and point [github] private_key_file at it")
        self.app_id = str(app_id)
        self.private_key_pem = private_key_pem
        self.installation_id = int(installation_id)
        self.clock: Clock = clock or SystemClock()
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = threading.Lock()

    def app_jwt(self) -> str:
        now = int(self.clock.now())
        try:
            return jwt.encode({"iat": now - 60, "exp": now + JWT_LIFETIME, "iss": self.app_id},
                              self.private_key_pem, algorithm="RS256")
        except (ValueError, TypeError) as exc:
            raise UsageError(f"the GitHub App private key cannot sign: {exc}",
                             "use the RSA key GitHub generated for the App") from exc

    def installation_token(self, client: httpx.Client, base_url: str) -> str:
        with self._lock:
            if self._token is None or self.clock.now() >= self._expires_at - REFRESH_MARGIN:
                self._token, self._expires_at = self._exchange(client, base_url)
            return self._token

    def _exchange(self, client: httpx.Client, base_url: str) -> tuple[str, float]:
        url = f"{base_url}/app/installations/{self.installation_id}/access_tokens"
        try:
            r = client.post(url, headers={"Authorization": f"Bearer {self.app_jwt()}",
                                          "Accept": "application/vnd.github+json"})
        except httpx.HTTPError as exc:
            raise UnavailableError(f"GitHub did not answer the installation token request: {exc}",
                                   "check the network and [github] api_url") from exc
        if r.status_code in (401, 403, 404):
            raise RefusedError(f"GitHub refused the App's installation token request ({r.status_code}): "
                               f"{_message(r)}", "check app_id, the private key and installation_id")
        if r.status_code != 201:
            raise UnavailableError(f"GitHub answered {r.status_code} to the installation token request",
                                   "try again later")
        try:
            body = r.json()
            token, expires = str(body["token"]), datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UnavailableError("GitHub's installation token answer is malformed", "try again later") from exc
        return token, expires.timestamp()

    def header(self, client: httpx.Client, base_url: str) -> str:
        return f"Bearer {self.installation_token(client, base_url)}"

    def git_token(self, client: httpx.Client, base_url: str) -> str:
        return self.installation_token(client, base_url)


def _message(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return r.text[:200]
    return str(body.get("message", ""))[:200] if isinstance(body, dict) else ""
