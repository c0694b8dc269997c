"""Checkout totals. Prices are in rupees; the result is rounded to paise."""

COUPONS = {"SAVE10": 10.0, "SAVE50": 50.0, "SAVE300": 300.0}


def subtotal(price: float, quantity: int) -> float:
    if price < 0 or not 1 <= quantity <= 99:
        raise ValueError("Use a valid price and a quantity between 1 and 99.")
    return price * 100 * quantity / 100


def total(price: float, quantity: int, coupon: str = "") -> float:
    """The payable amount for `quantity` items at `price` with an optional coupon code."""
    amount = subtotal(price, quantity)
    if coupon:
        if coupon not in COUPONS:
            raise ValueError(f"Unknown coupon {coupon!r}.")
        amount -= COUPONS[coupon]
    return round(amount, 2)
