/** Checkout totals. Prices are in rupees; the result is rounded to paise. */

export const COUPONS: Readonly<Record<string, number>> = { SAVE10: 10, SAVE50: 50, SAVE300: 300 };

const GIFT_WRAP = 30;

export function subtotal(price: number, quantity: number): number {
  if (price < 0 || !Number.isInteger(quantity) || quantity < 1 || quantity > 99) {
    throw new RangeError("Use a valid price and a quantity between 1 and 99.");
  }
  return (price * 100 * quantity) / 100;
}

/** The payable amount for `quantity` items at `price`, with an optional coupon and gift wrap. */
export function calculateTotal(price: number, quantity: number, coupon = "", giftWrap = false): number {
  let amount = subtotal(price, quantity);
  if (coupon) {
    const off = COUPONS[coupon];
    if (off === undefined) {
      throw new RangeError(`Unknown coupon ${JSON.stringify(coupon)}.`);
    }
    amount -= off;
  }
  if (giftWrap) {
    amount += GIFT_WRAP;
  }
  return Math.round(amount * 100) / 100;
}
