"""A tiny checkout: prices are whole cents, coupons are whole percentages."""


def total_after_coupon(cents: int, percent: int) -> int:
    """The cart total after a percentage coupon, rounded down to a whole cent."""
    return cents * (100 - percent) // 100


def checkout_total(prices: list[int], percent: int) -> int:
    """Sum the cart, then apply the coupon once to the whole."""
    return total_after_coupon(sum(prices), percent)
