"""ShopLite: a very small shop used as the desk's fixture."""

SERVICE = "shoplite"
