"""Pages as a browser without a script sees them: its own cookie jar, the CSRF token a page gives it."""

from __future__ import annotations

import httpx

from signoff.kernel.tls import tls_context


def csrf_of(client: httpx.Client, path: str = "/signin") -> str:
    """The CSRF token the page at `path` gives this client."""
    html = client.get(path).text
    return html.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def password_client(base_url: str, name: str, password: str) -> tuple[httpx.Client, str]:
    """A client signed in as `name` with its password, and its CSRF token; the caller closes it."""
    # A page may take more than httpx's default 5 s on a loaded two-core machine (a run page reads
    # every room of an incident): the tests judge answers, not speed.
    client = httpx.Client(base_url=base_url, verify=tls_context(), timeout=60.0)
    csrf = csrf_of(client)
    answer = client.post("/signin", data={"csrf": csrf, "name": name, "password": password})
    assert answer.status_code == 303, f"sign-in as {name} failed: {answer.status_code}"
    return client, csrf
