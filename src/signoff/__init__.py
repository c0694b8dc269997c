"""signoff: agents draft, people sign off, code verifies.

The library's public face, for using signoff from Python (each name is imported on first use, so
`import signoff` stays cheap):

    import signoff
    settings = signoff.Settings.load()
    result = signoff.verify(signoff.VerifyRequest(repo=..., base=..., candidate=..., harness=..., expect=...),
                            settings)
    verdict = signoff.scan(report_text)           # untrusted text, normalised and scanned
    ledger = signoff.SqlLedger.open(settings)     # events, jobs, one unit of work (a signoff.Ledger)
    rooms = signoff.RoomService(ledger)           # or signoff.RoomsClient over HTTP
    check = signoff.verify_file(evidence_path, signoff.KeyStore(settings.keys_dir).trusted())

Everything else lives in the packages (`signoff.repair`, `signoff.rooms`, ...), each with its own
small facade in its `__init__`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# name -> the package facade it comes from
_PUBLIC = {
    "Settings": "signoff.kernel",
    "SignoffError": "signoff.kernel",
    "Ledger": "signoff.ledger",
    "SqlLedger": "signoff.ledger",
    "NewEvent": "signoff.ledger",
    "NewJob": "signoff.ledger",
    "KeyStore": "signoff.trust",
    "statement": "signoff.trust",
    "verify_file": "signoff.trust",
    "scan": "signoff.airlock",
    "verify": "signoff.repair",
    "VerifyRequest": "signoff.repair",
    "VerifyResult": "signoff.repair",
    "RoomService": "signoff.rooms",
    "RoomsClient": "signoff.rooms.client",
}

if TYPE_CHECKING:
    __version__: str
    from signoff.airlock import scan
    from signoff.kernel import Settings, SignoffError
    from signoff.ledger import Ledger, NewEvent, NewJob, SqlLedger
    from signoff.repair import VerifyRequest, VerifyResult, verify
    from signoff.rooms import RoomService
    from signoff.rooms.client import RoomsClient
    from signoff.trust import KeyStore, statement, verify_file


def _version() -> str:
    # importlib.metadata costs a CLI run about 50 ms of imports, so only when the version is asked for.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("signoff")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0.0.0+src"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
        globals()[name] = value
        return value
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'signoff' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, "__version__"})


__all__ = [
    "KeyStore",
    "Ledger",
    "NewEvent",
    "NewJob",
    "RoomService",
    "RoomsClient",
    "Settings",
    "SignoffError",
    "SqlLedger",
    "VerifyRequest",
    "VerifyResult",
    "__version__",
    "scan",
    "statement",
    "verify",
    "verify_file",
]
