// The ceilings of a paid request on this machine: plain node:http that reads the same
// `POST /verify` body the facilitator gets, parses it, and does one strict ed25519 verify of the
// voucher (@svc/core's voucher context: the same message and strict checks as the facilitator).
// `npm run bench` runs each ceiling in its own process, like the facilitator, and drives all of
// them with the same client.
//
// The raw ceiling (two arguments) does that and nothing else: no validation schema, no
// compare-and-set, no durable commit, no receipt.
//
// The durable ceiling (a third argument, a directory) also does the work svc may not skip on an
// accepted voucher: it signs a receipt with @svc/core's signReceipt (the canonical receipt bytes,
// ed25519 under a fixed key, inline on the main thread as the facilitator does on two cores or
// fewer: packages/facilitator/src/composition/domain.ts), appends the receipt's line to
// <dir>/receipts.log, and answers only once that line is on disk. Appends are group-committed:
// the lines that arrive while one fdatasync is in flight are written together and wait for the
// next one, so there is one write and one fdatasync per batch, never one per request.
//
//   node bench/ceiling-server.mjs <network passphrase> <channel contract> [<receipts dir>]
//   POST /keys   { "<channel id>": "<voucher key hex>", … }  registers voucher keys
//   POST /verify the x402 verify body                        → { isValid, payer[, receipt] }
//   GET  /stats  (durable only)                              → { receipts, syncs } since start
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { formatUnits, fromHex, keypairFromSeed, signReceipt, voucherContext } from '@svc/core';

const [passphrase, contract, receiptsDir] = process.argv.slice(2);
if (!passphrase || !contract) {
  console.error('usage: node bench/ceiling-server.mjs <network passphrase> <channel contract> [<receipts dir>]');
  process.exit(2);
}
const ctx = voucherContext(passphrase, contract);
const keys = new Map();

// ---- the durable ceiling's receipts -------------------------------------------------------------

/** A fixed receipt key: the bench needs a signature of the right cost, not a secret. */
const signer = keypairFromSeed(new Uint8Array(32).fill(7));
const log = receiptsDir ? fs.openSync(path.join(receiptsDir, 'receipts.log'), 'a') : null;
/** Lines waiting for the next fdatasync, each with the answer it holds back. */
let queued = [];
let syncing = false;
const stats = { receipts: 0, syncs: 0 };

/** Appends `line` and calls `done(err)` once it is durable (group commit). */
function appendDurably(line, done) {
  queued.push({ line, done });
  if (!syncing) commit();
}

function commit() {
  const batch = queued;
  queued = [];
  syncing = true;
  const finish = (err) => {
    syncing = false;
    if (!err) {
      stats.receipts += batch.length;
      stats.syncs++;
    }
    for (const { done } of batch) done(err);
    if (queued.length > 0) commit();
  };
  // One write of the whole batch (writeFile on an fd writes it all; 'a' appends), then one fdatasync.
  fs.writeFile(log, batch.map((b) => b.line).join(''), (err) => (err ? finish(err) : fs.fdatasync(log, finish)));
}

/** The receipt svc signs for an accepted `channel` voucher (packages/facilitator/src/domain/voucher-advance.ts). */
function receiptOf(body, p) {
  const req = body.paymentRequirements;
  return signReceipt(signer, {
    v: 1,
    network: req.network,
    signer: signer.address,
    channelId: p.channelId,
    // The ceiling keeps no channel records: an account address of the same length stands in.
    payer: signer.address,
    payee: req.payTo,
    resource: body.paymentPayload.resource.url,
    method: body.method,
    unit: req.unit,
    amount: formatUnits(BigInt(req.amount)),
    cumulative: formatUnits(BigInt(p.cumulative)),
    requestHash: null,
    ts: new Date().toISOString(),
  });
}

// ---- HTTP ---------------------------------------------------------------------------------------

function answer(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') return answer(res, 200, stats);
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
    if (!ok) return answer(res, 200, { isValid: false, invalidReason: 'SIGNATURE_INVALID' });
    if (log === null) return answer(res, 200, { isValid: true, payer: p.channelId });
    const receipt = receiptOf(body, p);
    appendDurably(`${JSON.stringify(receipt)}\n`, (err) =>
      err
        ? answer(res, 503, { error: 'NOT_DURABLE', message: String(err) })
        : answer(res, 200, { isValid: true, payer: p.channelId, receipt }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () =>
  server.close(() => {
    if (log !== null) fs.closeSync(log);
    process.exit(0);
  }),
);
