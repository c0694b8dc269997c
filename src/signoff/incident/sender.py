"""Posting on behalf of an organisation: every post passes its guard in the sender, before it leaves.

`RoomLog` is a minimal append-only transcript (JSON lines) standing in for a room server in this
part: it assigns message ids. Part 2 puts the same `GuardedSender` in front of real rooms.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.incident.approvals import Message
from signoff.incident.disclosure import Disclosure
from signoff.incident.guard import Guard, GuardVerdict, Post
from signoff.kernel.errors import IntegrityError, RefusedError
from signoff.kernel.ids import new_id


class RoomLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, room: str, sender: str, org: str, text: str, d_id: str | None = None,
               extra: dict[str, Any] | None = None) -> Message:
        msg = Message(f"msg_{new_id()[:16]}", room, sender, text)
        row = {"msg_id": msg.msg_id, "room": room, "sender": sender, "org": org, "text": text, "d_id": d_id,
               **(extra or {})}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        return msg

    def rows(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for n, ln in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not ln.strip():
                continue
            problem = IntegrityError(f"{self.path.name} line {n} is not a message", "the transcript was edited")
            try:
                row = json.loads(ln)
            except ValueError as exc:
                raise problem from exc
            if not isinstance(row, dict):
                raise problem
            out.append(row)
        return out


@dataclass
class GuardedSender:
    """An organisation's agent's only way out: guard first, then the room."""

    org: str
    agent: str
    guard: Guard
    rooms: RoomLog

    def post(self, room: str, text: str, disclosure: Disclosure | None = None) -> Message:
        verdict: GuardVerdict = self.guard.check(Post(room, text, disclosure))
        if not verdict.allowed:
            raise RefusedError(f"{self.org}'s guard blocked the post to {room}: {', '.join(verdict.rules)}",
                               "remove what the rules name, or get the disclosure approved and post it unchanged")
        extra = {}
        if disclosure is not None:
            extra = {"evidence_sha256": disclosure.evidence_sha256, "text_sha256": disclosure.text_sha256}
        return self.rooms.append(room, self.agent, self.org, text, disclosure.d_id if disclosure else None, extra)
