"""Webhook events: generated deterministically so every run sends the same 60 events."""

from __future__ import annotations

import json
import random
from typing import Any

FIRST = ["Alice", "Brian", "Carla", "Derek", "Elena", "Frank", "Grace", "Hamid", "Irene", "Jonas",
         "Karen", "Liam", "Mona", "Nikhil", "Olga", "Peter", "Quinn", "Rosa"]
LAST = ["Archer", "Bishop", "Collins", "Dawson", "Ellison", "Fletcher", "Garrison", "Hughes",
        "Ingram", "Jennings", "Kendall", "Lawson", "Merritt", "Norwood", "Osborne"]
# Customers whose names carry accented letters; these are the events ShopCo rejects.
ACCENTED = ["José Álvarez", "Zoë Lindqvist", "Renée Dubois", "Björn Müller", "Chloé Martin", "Łukasz Nowak"]
ACCENTED_AT = (6, 13, 22, 31, 44, 57)


def customer_names(count: int = 60) -> list[str]:
    rng = random.Random(20261130)
    names: list[str] = []
    accented = iter(ACCENTED)
    for i in range(count):
        if i in ACCENTED_AT:
            names.append(next(accented))
        else:
            names.append(f"{rng.choice(FIRST)} {rng.choice(LAST)}")
    return names


def _email(name: str) -> str:
    plain = name.encode("ascii", "ignore").decode().lower().replace(" ", ".")
    return f"{plain}@example.com"


def generate_events(count: int = 60) -> list[dict[str, Any]]:
    rng = random.Random(60)
    events = []
    for i, name in enumerate(customer_names(count)):
        items = [{"sku": f"SKU-{rng.randint(1000, 9999)}", "qty": rng.randint(1, 4)}
                 for _ in range(rng.randint(1, 3))]
        events.append({
            "id": f"evt_{i + 1:04d}",
            "type": "payment.succeeded",
            "created": 1795000000 + 61 * i,
            "data": {
                "customer": {"id": f"cus_{rng.randint(100000, 999999)}", "name": name, "email": _email(name)},
                "amount": rng.randint(500, 50000),
                "currency": "EUR",
                "items": items,
            },
        })
    return events


def serialise(event: dict[str, Any], keep_unicode: bool = False) -> bytes:
    # The compact form is what goes on the wire. Without keep_unicode, json escapes every
    # non-ASCII character as \uXXXX (the original behaviour).
    body = json.dumps(event, separators=(",", ":"), ensure_ascii=not keep_unicode).encode("utf-8")
    return body
