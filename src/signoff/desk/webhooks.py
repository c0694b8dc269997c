"""GitHub-format webhooks: signing, verification, replay protection, and the payloads the local
forge sends.

GitHub signs the raw request body with HMAC-SHA256 under the webhook secret and sends
`X-Hub-Signature-256: sha256=<hex>`, with the event name in `X-GitHub-Event` and a unique id per
delivery in `X-GitHub-Delivery`. The desk checks the signature over the exact bytes received
(never re-serialised JSON), in constant time, before parsing anything; then refuses a delivery id
it has already processed, and a repository that is not on the allowlist.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

from signoff.kernel.errors import Unauthenticated, UsageError
from signoff.kernel.settings import Settings
from signoff.trust.credentials import shared_secret

MAX_BODY = 1_000_000
LOCAL_OWNER = "local"  # the owner name of the local forge's repositories
EVENTS = ("pull_request", "pull_request_review", "deployment_status", "ping")


class BadSignature(Unauthenticated):
    """Unsigned or wrongly signed delivery (HTTP 401)."""


def secret_path(settings: Settings) -> Path:
    return settings.home / "desk" / "webhook.secret"


def signing_secret(settings: Settings) -> bytes:
    """The forge's webhook signing secret: one per home, whichever process creates it first."""
    return shared_secret(secret_path(settings))


def sign(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def headers_for(event: str, delivery: str, secret: bytes, body: bytes) -> dict[str, str]:
    return {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sign(secret, body),
            "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/signoff-forge"}


def _header(headers: dict[str, str], name: str) -> str | None:
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return None


def verify(secret: bytes, headers: dict[str, str], body: bytes) -> tuple[str, str, dict[str, Any]]:
    """(event, delivery id, payload) of a correctly signed delivery; BadSignature / UsageError otherwise."""
    if len(body) > MAX_BODY:
        raise UsageError(f"webhook body is larger than {MAX_BODY} bytes", "send smaller deliveries")
    given = _header(headers, "X-Hub-Signature-256")
    if not given:
        raise BadSignature("webhook delivery is not signed (no X-Hub-Signature-256)",
                           "configure the webhook secret on the sender")
    if not hmac.compare_digest(given.strip().encode(), sign(secret, body).encode()):
        raise BadSignature("webhook signature does not match the body",
                           "check the shared secret; the body must be sent byte for byte as signed")
    event = _header(headers, "X-GitHub-Event") or ""
    delivery = _header(headers, "X-GitHub-Delivery") or ""
    if event not in EVENTS:
        raise UsageError(f"webhook event {event!r} is not handled", f"send one of {', '.join(EVENTS)}")
    if not delivery or len(delivery) > 100:
        raise UsageError("webhook delivery has no X-GitHub-Delivery id", "send the delivery id header")
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"webhook body is not JSON: {exc}", "send application/json") from exc
    if not isinstance(payload, dict):
        raise UsageError("webhook body is not a JSON object", "send the event payload object")
    return event, delivery, payload


# -- payloads in GitHub's documented shapes (the fields the desk reads, plus the usual context) --

def _id(name: str) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest()[:7], 16)


def user(login: str, kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": _id(login), "type": kind,
            "html_url": f"https://forge.invalid/{login}"}


def repository(owner: str, name: str) -> dict[str, Any]:
    return {"id": _id(owner + "/" + name), "name": name, "full_name": f"{owner}/{name}",
            "owner": user(owner, "Organization"), "private": True, "default_branch": "main"}


def pull_request(owner: str, name: str, cr: dict[str, Any]) -> dict[str, Any]:
    merged = cr.get("merged_by")
    return {
        "number": cr["number"], "state": "closed" if cr.get("merged") else "open", "draft": cr.get("draft", True),
        "title": cr["title"], "body": cr.get("body", ""), "user": user(cr["author"], cr.get("author_type", "Bot")),
        "assignees": [user(a) for a in cr.get("assignees", [])],
        "head": {"ref": cr["branch"], "sha": cr["head"], "repo": repository(owner, name)},
        "base": {"ref": cr.get("base_ref", "main"), "sha": cr["base"], "repo": repository(owner, name)},
        "merged": bool(cr.get("merged")), "merge_commit_sha": cr.get("merge_commit"),
        "merged_by": user(merged["login"], merged["type"]) if merged else None,
        "html_url": f"https://forge.invalid/{owner}/{name}/pull/{cr['number']}",
    }


def repo_of(payload: dict[str, Any]) -> tuple[str, str]:
    """(name, full_name) of the payload's repository."""
    repo = payload.get("repository")
    if not isinstance(repo, dict) or not isinstance(repo.get("name"), str):
        raise UsageError("webhook payload names no repository", "send repository.name")
    return str(repo["name"]), str(repo.get("full_name") or repo["name"])
