"""Build the JavaScript coupon fixture's git repository: `python examples/coupon-js/build_repo.py DEST`.

Then, for example:

    signoff repair verify --runner node --repo DEST --base main --candidate genuine-fix \\
        --harness examples/coupon-js/harness --expect "coupon.test.js::coupon applies once" \\
        --regression "coupon.test.js::neighbours" --allow cart.js
"""

import sys
from pathlib import Path

from signoff.demo.fixture import build

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: build_repo.py DEST")
    repo = build(Path(__file__).resolve().parent, Path(sys.argv[1]))
    print(f"base {repo.base}")
    for name, commit in repo.candidates.items():
        print(f"{name} {commit}")
