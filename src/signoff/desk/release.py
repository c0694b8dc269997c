"""The recorder's health check: the deployment must answer with the expected service and commit."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlparse


def health_check(url: str, service: str, commit: str, timeout: float = 5.0) -> dict[str, Any]:
    """GET <url>/health; ok only if it answers 200 with {"service": service, "commit": commit}."""
    parsed = urlparse(url or "")
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return {"ok": False, "why": f"deployment url {url!r} is not an http(s) url"}
    target = url.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(target, timeout=timeout) as resp:  # noqa: S310 -- scheme checked above
            status = resp.status
            body = resp.read(65_536)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return {"ok": False, "why": f"{target} did not answer: {exc}"}
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {"ok": False, "why": f"{target} did not answer JSON"}
    if status != 200 or not isinstance(data, dict):
        return {"ok": False, "why": f"{target} answered {status}"}
    if data.get("service") != service:
        return {"ok": False, "why": f"{target} names service {data.get('service')!r}, not {service!r}"}
    if data.get("commit") != commit:
        return {"ok": False, "why": f"{target} serves commit {str(data.get('commit'))[:12]}, not {commit[:12]}"}
    return {"ok": True, "url": target, "service": service, "commit": commit}
