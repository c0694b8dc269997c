'use strict';
// The approved contract for the JavaScript coupon case, run with node's own test runner.
// The verifier mounts the checkout at $SIGNOFF_CHECKOUT.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const cart = require(path.join(process.env.SIGNOFF_CHECKOUT || path.join(__dirname, '..', 'repo'), 'cart.js'));

test('coupon applies once', () => {
  assert.strictEqual(cart.totalAfterCoupon(10000, 10), 9000, 'a 10% coupon on 10000 cents must leave 9000');
});

test.describe('neighbours', () => {
  test.it('zero coupon keeps the total', () => {
    assert.strictEqual(cart.totalAfterCoupon(10000, 0), 10000);
  });
  test.it('empty cart costs nothing', () => {
    assert.strictEqual(cart.checkoutTotal([], 10), 0);
  });
});
