"""One TLS context per process for every HTTP client signoff makes: made once (it cost 50 ms of CPU
per client), and still verifying certificates and host names."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from signoff.github.auth import TokenAuth
from signoff.github.client import GitHubClient
from signoff.incident.evidence_server import EvidenceClient
from signoff.kernel.tls import tls_context
from signoff.rooms.client import HttpSyncTransport, HttpTransport, HttpUserTransport


def test_the_shared_context_verifies_certificates_and_host_names() -> None:
    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True


def test_the_shared_context_trusts_what_ssl_cert_file_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Made as httpx makes one: the bundle SSL_CERT_FILE names is the one trusted (a deployment
    behind a company's own certificate authority relies on that)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "signoff test CA")])
    now = datetime.datetime.now(datetime.UTC)
    ca = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now)
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(key, hashes.SHA256()))
    bundle = tmp_path / "company-ca.pem"
    bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    tls_context.cache_clear()
    try:
        trusted = tls_context().get_ca_certs()
    finally:
        tls_context.cache_clear()
    assert [cert["subject"] for cert in trusted] == [((("commonName", "signoff test CA"),),)]


def test_making_signoff_clients_builds_no_further_context(monkeypatch: pytest.MonkeyPatch) -> None:
    tls_context()  # made once for the process
    made: list[str] = []
    original = ssl.create_default_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        made.append("context")
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    url = "http://127.0.0.1:9"
    closers = [
        HttpSyncTransport(url, "agent", "key").close,
        HttpUserTransport(url, "token").close,
        EvidenceClient(url, "token").close,
        GitHubClient(TokenAuth("github_pat_x"), url).close,
    ]
    asynchronous = HttpTransport(url, "agent", "key")
    for close in closers:
        close()
    asyncio.run(asynchronous.aclose())
    assert made == []
