// An external seller for bench/seller.ts: its own process, Express, and @svc/meter exactly as the
// README's "Selling" section has it, calling the facilitator over HTTP. Two routes run the same
// handler: GET /paid behind the meter at a per-request price, GET /free without it.
//
//   SVC_FACILITATOR=http://127.0.0.1:4020 SVC_PAY_TO=G… SVC_PRICE=5000 node bench/seller-app.mjs
//
// With SVC_SELLER_TOKEN (`svc-seller token`) the meter also attests every response it served.
//
// Started by the bench with an IPC channel, it reports there: { listening: port } once it listens,
// { cpu: process.cpuUsage(), hr } for every { cpu: true } it receives (so the bench can take the
// seller's own CPU time around a phase), and exits on { exit: true } — a normal exit, so that
// `node --cpu-prof` writes its profile.
import express from 'express';
import { svc } from '@svc/meter';

const facilitator = process.env.SVC_FACILITATOR ?? 'http://127.0.0.1:4020';
const price = BigInt(process.env.SVC_PRICE ?? '5000');

const sellerToken = process.env.SVC_SELLER_TOKEN || undefined;
const { meter } = svc({ facilitator, payTo: process.env.SVC_PAY_TO, sellerToken });
const app = express();
const handler = (req, res) => {
  res.json({ quote: 'A payment channel is a deposit with a promise.', n: 42 });
};
app.get('/paid', meter({ price, unit: 'request', description: 'A quote, per request' }), handler);
app.get('/free', handler);

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  if (process.send) process.send({ listening: port });
  else console.log(`selling GET http://127.0.0.1:${port}/paid (and /free)`);
});

process.on('message', (msg) => {
  if (msg?.cpu) process.send?.({ cpu: process.cpuUsage(), hr: String(process.hrtime.bigint()) });
  if (msg?.exit) {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
// The bench going away takes the seller with it.
process.on('disconnect', () => process.exit(0));
