"""Build the coupon fixture's git repository: `python examples/coupon/build_repo.py DEST`.

main is the defective base; branch false-fix edits the shop's own test to expect 8100; branch
genuine-fix removes the second discount. Then, for example:

    signoff repair verify --repo DEST --base main --candidate genuine-fix \\
        --harness examples/coupon/harness --expect test_coupon.py::test_coupon_applies_once \\
        --regression test_coupon.py::test_zero_coupon_keeps_total \\
        --regression test_coupon.py::test_empty_cart_costs_nothing --allow cart.py
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
