"""What an organisation captured: the raw bytes of each request as it sent or received them.

An evidence server serves these, and only fingerprints of them leave it. Two forms are read:

- a JSON-lines file, one request a line: `{"event_id": "...", "status": 401, "raw_b64": "..."}`.
  The id may be `event_id` or `id`; the bytes `raw_b64` (or `verified_b64`: base64, byte-exact) or
  `raw` (a string, taken as its UTF-8 bytes: fine for payloads that are valid UTF-8); `status` is
  optional (0: not known).
- a folder of files, one payload each, read byte for byte: the file name without its extension is
  the event id, and the status is 0.

The bytes are never parsed here: a payload that is not valid JSON is still evidence (the scanner
says where it breaks).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from signoff.kernel.errors import NotFoundError, UsageError

MAX_PAYLOAD = 4 * 1024 * 1024  # one request's bytes; a larger file is not a payload


@dataclass(frozen=True)
class Captured:
    """One request as an organisation saw it: the bytes it signed, sent, received or verified."""

    event_id: str
    status: int
    raw: bytes


def _row(path: Path, n: int, line: str) -> Captured:
    where = f"{path} line {n}"
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise UsageError(f"{where} is not JSON", "write one JSON object per line") from exc
    if not isinstance(row, dict):
        raise UsageError(f"{where} is not a JSON object", 'write {"event_id": ..., "raw_b64": ...} per line')
    event_id = row.get("event_id", row.get("id"))
    if not isinstance(event_id, str | int) or isinstance(event_id, bool) or not str(event_id).strip():
        raise UsageError(f"{where} has no event id", "give each line an event_id (or id)")
    status = row.get("status", 0)
    if not isinstance(status, int) or isinstance(status, bool):
        raise UsageError(f"{where}: status is not a number", "give the HTTP status as a number, or leave it out")
    blob = row.get("raw_b64", row.get("verified_b64"))
    if isinstance(blob, str):
        try:
            raw = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise UsageError(f"{where}: raw_b64 is not base64", "encode the bytes with standard base64") from exc
    elif isinstance(row.get("raw"), str):
        raw = str(row["raw"]).encode("utf-8")
    else:
        raise UsageError(f"{where} holds no bytes", "give the payload as raw_b64 (base64 of the exact bytes) or raw")
    return Captured(str(event_id), status, raw)


def load_capture(path: Path) -> list[Captured]:
    """The requests in a capture: a JSON-lines file, or a folder of one-payload files."""
    path = Path(path)
    if path.is_dir():
        out = []
        for f in sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")):
            if f.stat().st_size > MAX_PAYLOAD:
                raise UsageError(f"{f} is larger than {MAX_PAYLOAD} bytes", "capture one request per file")
            out.append(Captured(f.stem, 0, f.read_bytes()))
        return out
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise NotFoundError(f"capture file not found: {path}", "capture the requests first, or fix the path") \
            from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not a JSON-lines file", "give a .jsonl file, or a folder of payload files") \
            from exc
    return [_row(path, n, line) for n, line in enumerate(lines, 1) if line.strip()]


def load_captures(paths: Iterable[Path]) -> list[Captured]:
    """Every request of several captures; an event id seen twice is refused (which one would count?)."""
    out: list[Captured] = []
    seen: set[str] = set()
    for path in paths:
        for c in load_capture(path):
            if c.event_id in seen:
                raise UsageError(f"event {c.event_id} is captured twice ({path})",
                                 "keep one capture of each request, or give the requests distinct ids")
            seen.add(c.event_id)
            out.append(c)
    return out


__all__ = ["MAX_PAYLOAD", "Captured", "load_capture", "load_captures"]
