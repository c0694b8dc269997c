"""The approved contract for the coupon case. It is frozen before any fix exists and is never
shown to or changed by the fixing agent."""

import cart


def test_coupon_applies_once():
    assert cart.total_after_coupon(10000, 10) == 9000, (
        "a 10% coupon on 10000 cents must leave 9000, not apply twice"
    )


def test_zero_coupon_keeps_total():
    assert cart.total_after_coupon(10000, 0) == 10000


def test_empty_cart_costs_nothing():
    assert cart.checkout_total([], 10) == 0
