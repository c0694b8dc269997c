"""The notary: deterministic, no model. It issues a fresh random salt per incident and compares two
fingerprints of the same event field by field.

It holds no payloads. Its comparison says which fields match, which differ, the byte delta, and
which side escaped; and, when the delta is a multiple of 4 and only one side escaped, that this fits
non-ASCII characters written as 6-byte \\uXXXX escapes on one side and 2-byte UTF-8 on the other.

Its only state is the salts it issued: `state()` gives them as JSON and `Notary.from_state(...)` /
`Notary.restore(...)` rebuild a notary from them (part 2 keeps them in a room document only the
notary writes), refusing state that names an incident or a salt twice.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from signoff.incident.fingerprint import salt_id
from signoff.kernel.clock import Clock, SystemClock, utc_iso
from signoff.kernel.errors import IntegrityError, NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import readable_id


@dataclass(frozen=True)
class IssuedSalt:
    incident: str
    salt: bytes
    issued_at: str

    @property
    def salt_id(self) -> str:
        return salt_id(self.salt)

    def as_json(self) -> dict[str, Any]:
        # The salt is public inside the incident (posted in the shared room); it is useless elsewhere.
        return {"incident": self.incident, "salt": self.salt.hex(), "salt_id": self.salt_id,
                "issued_at": self.issued_at}

    @classmethod
    def from_json(cls, data: Any) -> IssuedSalt:
        """Read back `as_json()` (salt_id optional; when present it must match the salt)."""
        try:
            incident, salt, issued_at = str(data["incident"]), bytes.fromhex(str(data["salt"])), str(data["issued_at"])
        except (KeyError, TypeError, ValueError) as exc:
            raise IntegrityError("a stored notary salt is not {incident, salt (hex), issued_at}",
                                 "restore the notary's state from an untouched copy") from exc
        if not incident or len(salt) < 16:
            raise IntegrityError(f"stored salt of {incident or '(no incident)'} is empty or shorter than 16 bytes",
                                 "restore the notary's state from an untouched copy")
        issued = cls(incident, salt, issued_at)
        if "salt_id" in data and data["salt_id"] != issued.salt_id:
            raise IntegrityError(f"stored salt of {incident} does not match its salt id",
                                 "restore the notary's state from an untouched copy")
        return issued


@dataclass
class Notary:
    clock: Clock = field(default_factory=SystemClock)
    # Not an init argument: a notary's salts come only from open_incident or from restore().
    _issued: list[IssuedSalt] = field(default_factory=list, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def restore(cls, issued: Iterable[IssuedSalt], clock: Clock | None = None) -> Notary:
        """A notary that already issued `issued` (oldest first; the last one is current)."""
        salts = list(issued)
        incidents, ids = [s.incident for s in salts], [s.salt_id for s in salts]
        if len(set(incidents)) != len(incidents) or len(set(ids)) != len(ids):
            raise IntegrityError("the notary's stored salts name an incident or a salt twice",
                                 "restore the notary's state from an untouched copy")
        notary = cls(clock or SystemClock())
        notary._issued = salts
        return notary

    @classmethod
    def from_state(cls, state: Any, clock: Clock | None = None) -> Notary:
        """Rebuild from `state()`."""
        if not isinstance(state, dict) or not isinstance(state.get("issued"), list):
            raise IntegrityError("the notary's stored state is not {issued: [...]}",
                                 "restore the notary's state from an untouched copy")
        return cls.restore((IssuedSalt.from_json(i) for i in state["issued"]), clock)

    def state(self) -> dict[str, Any]:
        """Everything needed to restore this notary: the salts it issued, oldest first."""
        with self._lock:
            return {"issued": [s.as_json() for s in self._issued]}

    @property
    def issued(self) -> tuple[IssuedSalt, ...]:
        with self._lock:
            return tuple(self._issued)

    def open_incident(self, incident: str | None = None) -> IssuedSalt:
        """Issue a fresh salt; the new incident becomes the current one."""
        with self._lock:
            name = incident or readable_id("INC", len(self._issued) + 1)
            if any(s.incident == name for s in self._issued):
                raise UsageError(f"incident {name} already has a salt", "open a new incident; salts are never reused")
            issued = IssuedSalt(name, secrets.token_bytes(32), utc_iso(self.clock.now()))
            self._issued.append(issued)
            return issued

    @property
    def current(self) -> IssuedSalt:
        with self._lock:
            if not self._issued:
                raise NotFoundError("the notary has not issued a salt yet", "open an incident first")
            return self._issued[-1]

    def is_current(self, incident: str, salt: bytes | None = None) -> bool:
        try:
            cur = self.current
        except NotFoundError:
            return False
        return cur.incident == incident and (salt is None or secrets.compare_digest(cur.salt, salt))

    def compare(self, a: dict[str, Any], b: dict[str, Any]) -> Comparison:
        """Compare two fingerprints of one event under the current incident's salt."""
        cur = self.current
        for fp in (a, b):
            if not isinstance(fp, dict) or "fields" not in fp or "org" not in fp:
                raise UsageError("a fingerprint to compare must carry fields and org",
                                 "fetch it from an evidence server")
            if fp.get("incident") != cur.incident or fp.get("salt_id") != cur.salt_id:
                raise RefusedError(f"fingerprint from {fp.get('org')} is not under incident {cur.incident}'s salt",
                                   "fingerprint again with the salt the notary issued for the current incident")
        if a["event_id"] != b["event_id"]:
            raise UsageError(f"fingerprints are of different events ({a['event_id']} vs {b['event_id']})",
                             "compare two fingerprints of the same event")
        if a["org"] == b["org"]:
            raise UsageError("both fingerprints come from the same organisation", "compare one from each side")
        return compare_fingerprints(a, b)


@dataclass(frozen=True)
class Row:
    path: str
    status: str  # match | differ | only_<org>
    bytes_a: int | None
    bytes_b: int | None
    escaped_by: tuple[str, ...]
    non_ascii_by: tuple[str, ...]
    kind: str = ""  # the JSON type both sides have there (string, number...); "" when they differ

    @property
    def delta(self) -> int | None:
        if self.bytes_a is None or self.bytes_b is None:
            return None
        return self.bytes_a - self.bytes_b


@dataclass(frozen=True)
class Comparison:
    incident: str
    event_id: str
    org_a: str
    org_b: str
    total_a: int
    total_b: int
    digest_match: bool
    rows: tuple[Row, ...]

    @property
    def matching(self) -> list[str]:
        return [r.path for r in self.rows if r.status == "match"]

    @property
    def differing(self) -> list[Row]:
        return [r for r in self.rows if r.status != "match"]

    def findings(self) -> list[str]:
        out = []
        if not self.differing and not self.digest_match:
            out.append(f"every field matches, but the bodies differ between the fields (total {self.total_a} vs "
                       f"{self.total_b} bytes): whitespace, line endings, a byte order mark or a trailing newline")
        for r in self.differing:
            if r.delta is None:
                out.append(f"{r.path}: present only on {r.status.removeprefix('only_')}'s side")
                continue
            longer, d = (self.org_a, r.delta) if r.delta >= 0 else (self.org_b, -r.delta)
            line = f"{r.path}: {_bytes(d)} longer on {longer}'s side" if d else \
                f"{r.path}: same length, different bytes"
            if r.escaped_by:
                line += f"; \\u-escaped by {', '.join(r.escaped_by)} only" if len(r.escaped_by) == 1 else \
                    "; \\u-escaped by both"
            if d and d % 4 == 0 and r.escaped_by == (longer,) and r.non_ascii_by:
                line += f"; fits {d // 4} non-ASCII character(s) at +4 bytes each (\\uXXXX vs 2-byte UTF-8)"
            elif d and d % 5 == 0 and r.escaped_by == (longer,) and not r.non_ascii_by:
                # Nobody sent raw non-ASCII bytes: ASCII characters written as \uXXXX (6 bytes for 1),
                # as an HTML-safe encoder writes <, > and &.
                line += f"; fits {d // 5} ASCII character(s) written as \\uXXXX at +5 bytes each"
            elif not r.escaped_by:
                line += _unescaped_hint(r)
            out.append(line)
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": "measured",
            "incident": self.incident,
            "event_id": self.event_id,
            "orgs": [self.org_a, self.org_b],
            "total_bytes": {self.org_a: self.total_a, self.org_b: self.total_b},
            "digest_match": self.digest_match,
            "rows": [
                {"path": r.path, "status": r.status, self.org_a: r.bytes_a, self.org_b: r.bytes_b,
                 "delta": r.delta, "type": r.kind, "escaped_by": list(r.escaped_by),
                 "non_ascii_by": list(r.non_ascii_by)}
                for r in self.rows
            ],
            "matching": len(self.matching),
            "differing": [r.path for r in self.differing],
            "findings": self.findings(),
        }

    def table(self) -> str:
        head = f"{'field':<28} {self.org_a:>8} {self.org_b:>8} {'delta':>6}  escaped by"
        lines = [f"notary: {self.incident} {self.event_id}", head, "-" * len(head)]
        for r in self.rows:
            mark = "=" if r.status == "match" else "≠"
            delta = "" if r.delta is None else f"{r.delta:+d}"
            lines.append(f"{mark} {r.path:<26} {r.bytes_a if r.bytes_a is not None else '-':>8} "
                         f"{r.bytes_b if r.bytes_b is not None else '-':>8} {delta:>6}  {', '.join(r.escaped_by)}")
        lines.append(f"{len(self.matching)} fields match, {len(self.differing)} differ; "
                     f"total {self.total_a} vs {self.total_b} bytes")
        lines.extend(self.findings())
        return "\n".join(lines)


def _bytes(n: int) -> str:
    return "1 byte" if n == 1 else f"{n} bytes"


def _unescaped_hint(r: Row) -> str:
    """What a difference with no escape on either side fits, when the types say (a hint, not a finding:
    the notary sees lengths and salted hashes, never the values)."""
    if r.kind == "number":
        return "; a number on both sides: fits the same value written with other digits (trailing zeros, an " \
               "exponent, another precision)"
    if r.kind == "string" and len(r.non_ascii_by) == 2:
        return "; non-ASCII on both sides, escaped by neither: fits the same text in another Unicode " \
               "normalisation (NFC vs NFD) or another encoding of it"
    return ""


def compare_fingerprints(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """Line two fingerprints up by path (repeated paths pair up in order)."""

    def keyed(fp: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
        seen: dict[str, int] = {}
        out = {}
        for f in fp["fields"]:
            n = seen.get(f["path"], 0)
            seen[f["path"]] = n + 1
            out[(f["path"], n)] = f
        return out

    ka, kb = keyed(a), keyed(b)
    order = list(ka) + [k for k in kb if k not in ka]
    rows = []
    for key in order:
        fa, fb = ka.get(key), kb.get(key)
        if fa is None or fb is None:
            status = f"only_{a['org'] if fa else b['org']}"
        else:
            status = "match" if fa["hash"] == fb["hash"] else "differ"
        escaped = tuple(fp["org"] for fp, f in ((a, fa), (b, fb)) if f and f.get("escaped"))
        non_ascii = tuple(fp["org"] for fp, f in ((a, fa), (b, fb)) if f and f.get("non_ascii"))
        kind = str(fa.get("type", "")) if fa and fb and fa.get("type") == fb.get("type") else ""
        rows.append(Row(key[0], status, fa["length"] if fa else None, fb["length"] if fb else None,
                        escaped, non_ascii, kind))
    return Comparison(a["incident"], a["event_id"], a["org"], b["org"], int(a["total_bytes"]),
                      int(b["total_bytes"]), a["digest"] == b["digest"], tuple(rows))
