'use strict';
// ShopCo's webhook endpoint. Usage: node server.js --capture FILE [--fixed]  (secret in SHOPCO_SECRET)
// Prints "LISTENING <port>" once it accepts connections on a loopback port chosen by the OS.
const fs = require('fs');
const http = require('http');
const { Queue } = require('./lib/queue');
const { signedBytes, verify } = require('./lib/signature');

const args = process.argv.slice(2);
const capturePath = args[args.indexOf('--capture') + 1];
const keepRaw = args.includes('--fixed');
const secret = process.env.SHOPCO_SECRET || '';
const capture = fs.openSync(capturePath, 'w');

const queue = new Queue((job) => {
  // The worker runs after the request body is gone, unless the fix keeps the raw bytes.
  const bytes = keepRaw ? job.raw : signedBytes(job.payload);
  const ok = verify(secret, bytes, job.signature);
  const status = ok ? 200 : 401;
  fs.writeSync(capture, JSON.stringify({
    event_id: String(job.payload.id),
    status,
    received_bytes: job.received,
    verified_b64: bytes.toString('base64'),
  }) + '\n');
  return status;
});

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/webhooks') {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const raw = Buffer.concat(chunks);
    let payload;
    try {
      payload = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"error":"bad json"}');
      return;
    }
    const job = { payload, signature: req.headers['x-payco-signature'], received: raw.length };
    if (keepRaw) job.raw = raw;
    const status = await queue.push(job);
    const body = status === 200 ? '{"status":"accepted"}' : '{"error":"signature mismatch"}';
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
