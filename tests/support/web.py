"""Pages as a browser without a script sees them: its own cookie jar, the CSRF token a page gives it."""

from __future__ import annotations

import httpx

from signoff.kernel.tls import tls_context

# How long a test's HTTP client waits for an answer. httpx's default (5 s) is a timed assertion: on a
# loaded two-core machine a page that reads every room of an incident, or a sign-in's password hash,
# can take longer. The tests judge answers, not speed; this is only a deadline for a failure.
HTTP_WAIT = 120.0


def csrf_of(client: httpx.Client, path: str = "/signin") -> str:
    """The CSRF token the page at `path` gives this client."""
    html = client.get(path).text
    return html.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def password_client(base_url: str, name: str, password: str) -> tuple[httpx.Client, str]:
    """A client signed in as `name` with its password, and its CSRF token; the caller closes it."""
    client = httpx.Client(base_url=base_url, verify=tls_context(), timeout=HTTP_WAIT)
    csrf = csrf_of(client)
    answer = client.post("/signin", data={"csrf": csrf, "name": name, "password": password})
    assert answer.status_code == 303, f"sign-in as {name} failed: {answer.status_code}"
    return client, csrf
