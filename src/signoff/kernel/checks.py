"""The shape of a `signoff doctor` check. Each package offers `doctor_checks(settings)`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None  # the exact thing to run or change when not ok
    required: bool = True  # False: only some features need it

    def as_json(self) -> dict[str, Any]:
        return asdict(self)
