"""A tiny HTTP front for ShopLite: /health names the service and the deployed commit,
/checkout?price=..&quantity=..&coupon=.. returns the total."""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from shoplite import SERVICE
from shoplite.checkout import total


class Handler(BaseHTTPRequestHandler):
    def _send(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 -- the name http.server calls
        url = urlparse(self.path)
        if url.path == "/health":
            self._send(
                200,
                {"service": SERVICE, "commit": os.environ.get("SHOPLITE_COMMIT", "unknown"), "status": "ok"},
            )
            return
        if url.path == "/checkout":
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            try:
                amount = total(float(q.get("price", "0")), int(q.get("quantity", "1")), q.get("coupon", ""))
            except ValueError as exc:
                self._send(400, {"error": str(exc)})
                return
            self._send(200, {"total": amount})
            return
        self._send(404, {"error": "not found"})

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 -- http.server's signature
        return


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
