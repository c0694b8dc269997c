"""Send every event to ShopCo and record what was sent and how ShopCo answered.

Usage: python -m payco.sender --url URL --capture FILE [--fixed]   (secret in PAYCO_SECRET)
Prints a JSON summary on stdout.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import urllib.error
import urllib.request

from payco.events import generate_events, serialise
from payco.signing import sign


def deliver(url: str, secret: str, body: bytes) -> int:
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json",
        "X-PayCo-Signature": sign(secret, body),
    })
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="payco.sender")
    parser.add_argument("--url", required=True)
    parser.add_argument("--capture", required=True)
    parser.add_argument("--fixed", action="store_true")
    args = parser.parse_args(argv)
    secret = os.environ["PAYCO_SECRET"]
    accepted, rejected = [], []
    with open(args.capture, "w", encoding="utf-8") as log:
        for event in generate_events():
            body = serialise(event, keep_unicode=args.fixed)
            status = deliver(args.url, secret, body)
            (accepted if status == 200 else rejected).append(event["id"])
            log.write(json.dumps({"event_id": event["id"], "status": status,
                                  "raw_b64": base64.b64encode(body).decode("ascii")}) + "\n")
    json.dump({"accepted": accepted, "rejected": rejected}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
