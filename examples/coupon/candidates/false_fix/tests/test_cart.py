"""The shop's own tests. A fixing agent may edit these; the verifier never trusts them."""

import cart


def test_coupon():
    assert cart.total_after_coupon(10000, 10) == 8100
