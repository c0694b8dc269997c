"""PayCo: the payment provider that sends signed webhooks to ShopCo."""
