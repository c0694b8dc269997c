"""The process's one TLS context, shared by every HTTP client signoff makes.

An httpx client builds a TLS context when it is made, even for plain `http://` addresses, and
building one loads every trusted certificate: 50 ms of CPU where SSL_CERT_FILE names the system
bundle (as on our machines), against under a millisecond for the client itself. Processes that make
a client per call or per poll spent most of their time there. The context is made as httpx makes it
(SSL_CERT_FILE, then SSL_CERT_DIR, then certifi's bundle), once; a context is safe to share
between threads and connections.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """Pass as `verify=` to every httpx client and request."""
    return httpx.create_ssl_context()
