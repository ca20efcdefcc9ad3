// The raw ceiling of a paid request on this machine: plain node:http that reads the same
// `POST /verify` body the facilitator gets, parses it, and does one strict ed25519 verify of the
// voucher (the same message and checks as the facilitator) — and nothing else: no validation
// schema, no compare-and-set, no durable commit, no receipt. `npm run bench` runs it in its own
// process, like the facilitator, and drives both with the same client.
//
//   node bench/ceiling-server.mjs <network passphrase> <channel contract>
//   POST /keys   { "<channel id>": "<voucher key hex>", … }  registers voucher keys
//   POST /verify the x402 verify body                        → { isValid, payer }
import http from 'node:http';
import { fromHex, voucherContext } from '@svc/core';

const [passphrase, contract] = process.argv.slice(2);
if (!passphrase || !contract) {
  console.error('usage: node bench/ceiling-server.mjs <network passphrase> <channel contract>');
  process.exit(2);
}
const ctx = voucherContext(passphrase, contract);
const keys = new Map();

function answer(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return answer(res, 400, { error: 'BAD_JSON' });
    }
    if (req.url === '/keys') {
      for (const [id, hex] of Object.entries(body)) keys.set(id, fromHex(hex, 32));
      return answer(res, 200, { keys: keys.size });
    }
    const p = body?.paymentPayload?.payload;
    const key = p && keys.get(p.channelId);
    if (!key) return answer(res, 400, { isValid: false, invalidReason: 'CHANNEL_NOT_FOUND' });
    const ok = ctx.verify(key, BigInt(p.channelId), BigInt(p.cumulative), fromHex(p.signature, 64));
    answer(
      res,
      200,
      ok ? { isValid: true, payer: p.channelId } : { isValid: false, invalidReason: 'SIGNATURE_INVALID' },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
