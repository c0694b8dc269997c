'use strict';
// A tiny checkout in JavaScript: prices are whole cents, coupons whole percentages.

function totalAfterCoupon(cents, percent) {
  const discounted = Math.floor((cents * (100 - percent)) / 100);
  return Math.floor((discounted * (100 - percent)) / 100);
}

function checkoutTotal(prices, percent) {
  return totalAfterCoupon(prices.reduce((a, b) => a + b, 0), percent);
}

module.exports = { totalAfterCoupon, checkoutTotal };
