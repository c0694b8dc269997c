'use strict';
// Webhook signatures: HMAC-SHA256 over the request body.
const crypto = require('crypto');

function signedBytes(payload) {
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

function verify(secret, bytes, signature) {
  const expected = crypto.createHmac('sha256', secret).update(bytes).digest('hex');
  const given = Buffer.from(String(signature || ''), 'utf8');
  const want = Buffer.from(expected, 'utf8');
  return given.length === want.length && crypto.timingSafeEqual(given, want);
}

module.exports = { signedBytes, verify };
