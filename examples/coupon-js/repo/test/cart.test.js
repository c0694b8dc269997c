'use strict';
const test = require('node:test');
const assert = require('node:assert');
const cart = require('../cart.js');

test('coupon', () => {
  assert.strictEqual(cart.totalAfterCoupon(10000, 10), 9000);
});
