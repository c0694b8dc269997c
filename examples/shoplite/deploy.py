"""Deploy a ShopLite commit on a loopback port: export the commit, serve it, print the URL.

    python deploy.py --repo REPO --commit SHA [--port 0]

The process serves until it is stopped. The health endpoint reports the commit it serves.
"""

from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType

from signoff.demo.shoplite_deploy import serve_commit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    def stop(_signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(0)  # unwinds the context manager, which stops the served process

    signal.signal(signal.SIGTERM, stop)
    with serve_commit(args.repo, args.commit, port=args.port) as deployment:
        print(deployment.url, flush=True)
        deployment.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
