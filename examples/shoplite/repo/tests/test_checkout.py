from shoplite.checkout import total


def test_plain_checkout():
    assert total(200, 1) == 200


def test_small_coupon():
    assert total(200, 1, "SAVE10") == 190


def test_quantity():
    assert total(25, 4) == 100
