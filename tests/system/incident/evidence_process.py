"""An organisation's evidence server as its own process, for the restart and concurrency tests:
`python -m tests.system.incident.evidence_process DB_URL ORG CAPTURE INCIDENT` with the bearer token in
EVIDENCE_TOKEN and the notary's current salt (hex) in EVIDENCE_SALT. It binds 127.0.0.1 on a port
the OS picks, prints `port <n>` on its first stdout line and serves until it is killed.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    import uvicorn

    from signoff.incident.captures import load_capture
    from signoff.incident.evidence_server import EvidenceStore, make_app
    from signoff.incident.notary import IssuedSalt
    from signoff.ledger import SqlLedger

    db_url, org, capture, incident = argv
    issued = IssuedSalt(incident, bytes.fromhex(os.environ["EVIDENCE_SALT"]), "")
    store = EvidenceStore.of(org, load_capture(Path(capture)), SqlLedger.from_url(db_url))
    app = make_app(store, os.environ["EVIDENCE_TOKEN"], lambda: issued)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from here on, so the port line means "ready"
    print(f"port {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
