// GET /llms.txt: a plain-text guide for language models, generated at request time from the
// configuration, the ledger's identity and the route declarations, so it cannot go stale. The
// voucher test vector is computed here by the same voucher code the verifier uses.
import {
  REASON_STATUS,
  TX_DOMAIN,
  displayAmount,
  fromHex,
  keypairFromSeed,
  networkId,
  signLedgerTx,
  toHex,
  txCanonicalJson,
  txSigningHash,
  voucherContext,
} from '@svc/core';
import type { DemoPrice } from '@svc/core';
import type { LedgerInfo } from '@svc/ledger';
import type { Config } from '../../config.js';
import { COSTLY, PAGE, REUSE_MS } from '../channel-listing.js';
import { BACKLOG, REPLAY_MAX } from '../events/feed.js';
import { MCP_TOOLS } from '../mcp/tools.js';
import { openApiPath } from './document.js';
import type { RouteDoc } from './document.js';

/** docs/protocol.md#voucher's test vector inputs; the outputs are computed. */
export const VECTOR_INPUT = {
  networkPassphrase: 'Standalone Network ; February 2017',
  contractIdRawHex: '02'.repeat(32),
  channelId: '42',
  cumulative: '135000',
  voucherSecretSeedHex: '01'.repeat(32),
} as const;

export interface LlmsInput {
  baseUrl: string;
  config: Config;
  ledger: LedgerInfo;
  receiptSigner: string;
  /** Earlier signers, retired by a rotation, whose receipts still verify. */
  retiredSigners: readonly string[];
  routes: readonly RouteDoc[];
  demo: readonly DemoPrice[];
  /** The local ledger's routes are served here, under /ledger. */
  ledgerServed: boolean;
}

export function llmsText(i: LlmsInput): string {
  return (
    [
      ...intro(i),
      ...scheme(i),
      ...voucherBytes(i),
      ...paymentHeader(),
      ...(i.ledgerServed ? ledgerTransactions(i) : []),
      ...events(),
      ...errors(),
      ...prices(i),
      ...limits(i.config),
      ...endpoints(i.routes),
      ...exampleFlow(i),
    ].join('\n') + '\n'
  );
}

function intro(i: LlmsInput): string[] {
  const { ledger } = i;
  return [
    '# svc facilitator',
    '',
    '> svc meters HTTP APIs with x402 version 2 payments on payment channels. A buyer locks a deposit in a payment channel once, then pays each request (or each slice of a stream) with a signed voucher for a running total. This facilitator verifies vouchers, keeps what each channel was charged and claims it on the ledger in batches: many payments, one transaction. It speaks x402’s standard `batch-settlement` scheme and `channel`, the svc specification’s name for its subset; every 402 offers `channel` first, then `batch-settlement` for the same price.',
    '',
    `Test network only (${ledger.network}); the contracts are unaudited; never send mainnet funds.`,
    '',
    `- Base URL: ${i.baseUrl}`,
    `- OpenAPI 3.1 reference (always current): ${i.baseUrl}/openapi.json`,
    `- MCP (streamable HTTP, stateless): POST ${i.baseUrl}/mcp, tools ${MCP_TOOLS.join(', ')}`,
    `- Network: ${ledger.network}, passphrase "${ledger.passphrase}"`,
    `- Asset: ${ledger.asset.code}, contract ${ledger.contracts.asset}, ${ledger.asset.decimals} decimals. Amounts are decimal strings of integer base units (1 ${ledger.asset.code} = ${10n ** BigInt(ledger.asset.decimals)}), signed 128-bit: use big integers, never floats.`,
    `- Channel contract: ${ledger.contracts.channel}`,
    `- Receipt signer (ed25519): ${i.receiptSigner}${i.retiredSigners.length ? `; earlier signers, whose receipts still verify: ${i.retiredSigners.join(', ')}` : ''}`,
    '',
  ];
}

function scheme(i: LlmsInput): string[] {
  const c = i.config;
  return [
    '## batch-settlement and channel',
    '',
    '- `batch-settlement` is x402’s standard scheme for payment channels: a voucher is a ceiling — what was charged on the channel so far plus this payment’s price — and the facilitator charges what the request cost (at most the price). The channel must be opened bound to this facilitator’s key as its receiver authorizer (`extra.receiverAuthorizer` of the 402’s batch-settlement option, also in GET /supported). The payload is { "type": "voucher", "voucher": { "channelId", "maxClaimableAmount", "signature" } }, signed with the same voucher bytes as below. A ceiling that is not what was charged plus the price is refused with the channel’s state (extra.channelState, extra.voucherState) for the buyer to catch up. Streams take it as well: each slice’s voucher is the ceiling charged + slice.',
    '- `channel` is the svc specification’s name for its subset: a voucher is what is owed in all, and the whole price is charged. The steps below are its; they hold for batch-settlement with the ceiling in place of the total.',
    '',
    '## The channel scheme',
    '',
    '1. The buyer opens a channel on the ledger: payee = the seller’s payTo, a deposit, a voucher key (an ed25519 public key the buyer chooses, 64 hex) and an expiry ledger. The deposit is the buyer’s maximum loss.',
    '2. A request without payment gets HTTP 402 with the terms: `accepts[0]` gives scheme, network, asset, payTo, amount (price of one unit), unit (request, token or second), extra.channelContract, extra.minDeposit, extra.facilitator and, for token/second, extra.sliceTokens/sliceSeconds and extra.sliceAmount.',
    '3. The buyer signs a voucher for the new cumulative total (previous total + amount, or + sliceAmount for streams) and retries with the PAYMENT-SIGNATURE header. The cumulative only grows and never exceeds the deposit.',
    '4. The seller’s middleware asks this facilitator (POST /verify). A valid voucher advances the channel and yields a receipt signed by the receipt signer, returned in PAYMENT-RESPONSE. A rejected one is a 402 with `error` = the reason code and the same accepts.',
    `5. Settlement: the facilitator claims a channel when its unclaimed amount reaches ${c.CLAIM_THRESHOLD} (checked every ${c.CLAIM_INTERVAL_SECONDS} s) and always from ${c.CLAIM_EXPIRY_MARGIN_LEDGERS} ledgers before expiry. Anyone may call POST /channels/{id}/claim; it pays only the payee.`,
    '6. Streams (token and second units): the first slice is paid like a request, then the server-sent-event stream emits `payment-required` with the next requiredCumulative; the buyer posts that voucher to POST /channels/{id}/voucher with the streamId. One voucher per payment-required, for exactly one slice: a voucher of more than one slice, or one posted before the seller has taken the slice before it, is refused (409 CONFLICT, nothing charged). The stream ends with `done`.',
    '7. Sellers: the seller side (the middleware) proves itself with a seller token (Authorization: Bearer …; POST /sellers/{payTo}/token, signed by the payTo key). Only it opens and drives stream sessions, receives a receipt’s attestToken, and publishes its discovery listing; a payment to a seller is verified with or without it.',
    '',
  ];
}

function voucherBytes(i: LlmsInput): string[] {
  const v = VECTOR_INPUT;
  const ctx = voucherContext(v.networkPassphrase, fromHex(v.contractIdRawHex, 32));
  const key = keypairFromSeed(fromHex(v.voucherSecretSeedHex, 32));
  const [id, cumulative] = [BigInt(v.channelId), BigInt(v.cumulative)];
  const expected = {
    networkIdHex: toHex(networkId(v.networkPassphrase)),
    messageHex: toHex(ctx.message(id, cumulative)),
    hashHex: toHex(ctx.hash(id, cumulative)),
    publicKeyHex: key.publicKeyHex,
    signatureHex: toHex(ctx.sign(key, id, cumulative)),
  };
  return [
    '## Voucher bytes',
    '',
    '```',
    'message   = "svc:voucher:v1"                 14 bytes ASCII',
    '          ‖ sha256(network passphrase)       32 bytes',
    '          ‖ channel contract id, raw         32 bytes (the C… StrKey decoded)',
    '          ‖ channel id                       8 bytes, u64 big-endian',
    '          ‖ cumulative                       16 bytes, i128 big-endian two’s complement',
    'hash      = sha256(message)                  (message is 102 bytes)',
    'signature = ed25519_sign(voucher secret, hash)   the 32-byte hash is what is signed',
    '```',
    '',
    'Keys and signatures travel as lowercase hex (64 and 128 characters). Verification is strict: non-canonical or small-order keys and signatures are refused (VOUCHER_BAD_SIGNATURE).',
    `On this facilitator: passphrase "${i.ledger.passphrase}", channel contract ${i.ledger.contracts.channel}.`,
    '',
    'Test vector (reproduce it byte for byte):',
    '',
    '```json',
    JSON.stringify({ ...v, expected }, null, 2),
    '```',
    '',
  ];
}

function paymentHeader(): string[] {
  return [
    '## Payment header',
    '',
    'PAYMENT-SIGNATURE: standard base64 (with padding) of UTF-8 JSON:',
    '',
    '```json',
    '{ "x402Version": 2, "accepted": <the accepts element you chose>, "payload": { "channelId": "42", "cumulative": "135000", "signature": "<128 hex>" } }',
    '```',
    '',
    'channelId matches ^[0-9]{1,20}$ (u64), cumulative ^[0-9]{1,39}$ (i128), signature ^[0-9a-f]{128}$. x402 v1 clients may send X-PAYMENT and read X-PAYMENT-RESPONSE.',
    'PAYMENT-RESPONSE (on success): base64 JSON { success, transaction: "", network, payer, scheme, channelId, cumulative, delta, remaining, latencyMs, receipt }. The receipt { v, id, network, signer, channelId, payer, payee, resource, method, unit, amount, cumulative, requestHash, ts, signature } is signed with ed25519 over the RFC 8785 JSON of the receipt without id and signature; id = sha256 hex of those bytes. Check it offline with the receipt signer.',
    '',
  ];
}

/** The transaction test vector's inputs (a channel.open); the outputs are computed. */
export const TX_VECTOR_INPUT = {
  networkPassphrase: VECTOR_INPUT.networkPassphrase,
  sourceSecretSeedHex: '03'.repeat(32),
  seq: 1,
  op: 'channel.open',
  payeeSecretSeedHex: '04'.repeat(32),
  args: { deposit: '5000000', voucherKey: 'aa'.repeat(32), expiryLedger: 17400 },
} as const;

function ledgerTransactions(i: LlmsInput): string[] {
  const c = i.config;
  const { ledger } = i;
  const v = TX_VECTOR_INPUT;
  const key = keypairFromSeed(fromHex(v.sourceSecretSeedHex, 32));
  const payee = keypairFromSeed(fromHex(v.payeeSecretSeedHex, 32)).address;
  const body = { source: key.address, seq: v.seq, op: v.op, args: { payee, ...v.args } };
  const signed = signLedgerTx(key, v.networkPassphrase, body);
  const expected = {
    source: key.address,
    payee,
    canonicalJson: txCanonicalJson(body),
    networkIdHex: toHex(networkId(v.networkPassphrase)),
    hashHex: toHex(txSigningHash(v.networkPassphrase, body)),
    signatureHex: signed.signature,
  };
  return [
    '## Ledger transactions (POST /ledger/tx)',
    '',
    `The ledger of this facilitator is served under ${i.baseUrl}/ledger. A transaction is the JSON { source, seq, op, args, signature }:`,
    '',
    '- source: your account, the G… StrKey of your ed25519 public key (or a smart account C… whose agent or owner key signs).',
    '- seq: a JSON integer, your account’s current seq + 1. Read it with GET /ledger/accounts/{address} → { seq } (a new account has seq 0, so its first transaction has seq 1). Every transaction with a valid signature uses up its seq, a FAILED one too.',
    '- op, args: below. Amounts in args are decimal strings of base units; ledger numbers are JSON integers.',
    '- signature: 128 hex, ed25519 by the source’s key over the 32-byte hash:',
    '',
    '```',
    `hash = sha256( ${`"${TX_DOMAIN}"`.padEnd(32)}${TX_DOMAIN.length} bytes ASCII`,
    '             ‖ network id                      32 bytes = sha256(network passphrase)',
    '             ‖ JCS({ source, seq, op, args })  RFC 8785 canonical JSON, UTF-8 )',
    '```',
    '',
    'The hash in hex is the transaction’s hash (GET /ledger/tx/{hash}). The answer: { hash, status: "SUCCESS" | "FAILED", ledger, result?, code?, events }; FAILED means the contract refused it (code). A wrong signature, seq or shape is a 400 error body, and nothing happened.',
    '',
    `- channel.open { payee, deposit, voucherKey, expiryLedger } → result.channelId (a decimal string: the channelId of your vouchers). payee = accepts[0].payTo, deposit ≥ extra.minDeposit, voucherKey = the 64-hex public key your vouchers are signed with. expiryLedger must be after the latest ledger (GET /ledger/info → latestLedger; a ledger closes every ${ledger.ledgerSeconds} s), and vouchers are refused within ${c.VOUCHER_EXPIRY_SAFETY_LEDGERS} ledgers of it (CHANNEL_EXPIRING): latestLedger + ${Math.ceil(86_400 / ledger.ledgerSeconds)} keeps a channel open for a day here.`,
    '- channel.top_up { channelId, amount, expiryLedger? } → result { deposit, expiryLedger } (the expiry can only move later).',
    '- channel.close { channelId } → result { refunded }: the payer from expiryLedger + 120 ledgers on (what was not claimed comes back), the payee at any time (giving up what it has not claimed).',
    '- transfer { to, amount }.',
    '',
    'Test vector (a channel.open; reproduce it byte for byte):',
    '',
    '```json',
    JSON.stringify({ ...v, expected }, null, 2),
    '```',
    '',
  ];
}

function events(): string[] {
  return [
    '## Events (GET /events, GET /accounts/{address}/ledger)',
    '',
    'Each event is { id, type, source, ts, channelId?, account?, data }; ids grow in the order events are stored, and a channel’s opening comes before its first payment. Types: channel.opened, channel.topped_up, voucher.accepted, voucher.rejected, channel.claimed, channel.closed (data.lost: what the seller can no longer be paid), payment.exact, chain.rejected, stream.started, stream.ended, dex.swapped, account.frozen (data.frozen: true when the owner froze the account’s agent, false when it thawed it).',
    '',
    `GET /events sends the last ${BACKLOG} events, then live ones. Reconnect with Last-Event-ID to get every event after it (from the store, up to ${REPLAY_MAX}); past that, a \`feed.gap\` frame { after, before, reason } names the ids not sent, then come the last ${BACKLOG}. A Last-Event-ID beyond the newest event (another deployment’s) gets a \`feed.reset\` frame { lastEventId, newestId, reason }, then the last ${BACKLOG}. Those two frames carry no id.`,
    '',
  ];
}

function errors(): string[] {
  const byStatus = new Map<number, string[]>();
  for (const [code, status] of Object.entries(REASON_STATUS))
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  return [
    '## Errors',
    '',
    'Every non-2xx body: { "error": "CODE", "source": "gateway|facilitator|ledger", "message": "…", "tx"?: "…" }. POST /verify answers a rejected payment with 200 { "isValid": false, "invalidReason": "CODE", "invalidMessage": "…" }. 429 comes with Retry-After (seconds).',
    '',
    ...[...byStatus].map(([status, codes]) => `- ${status}: ${codes.join(', ')}`),
    '',
  ];
}

function prices(i: LlmsInput): string[] {
  const code = i.ledger.asset.code;
  const amount = (units: string) =>
    `${units} base units (${displayAmount(BigInt(units), i.ledger.asset.decimals)} ${code})`;
  const line = (p: DemoPrice) =>
    `- ${p.method} ${i.baseUrl}${p.path}: ${amount(p.price)} per ${p.unit}` +
    (p.slice === null ? '' : `, ${p.slice} ${p.unit}s per voucher = ${amount(p.sliceAmount ?? '0')}`) +
    `; minimum deposit ${amount(p.minDeposit)}. ${p.description}`;
  return [
    '## Prices (live, from this facilitator’s configuration)',
    '',
    ...(i.demo.length ? i.demo.map(line) : ['The demo seller is off on this facilitator (DEMO=0).']),
    '',
    'Other sellers’ prices: GET /discovery/resources (each item’s accepts), or the MCP tool svc_price_list.',
    '',
  ];
}

function limits(c: Config): string[] {
  return [
    '## Limits',
    '',
    `- Vouchers per channel: ${c.CHANNEL_VOUCHER_LIMIT_PER_MINUTE} per minute (then 429 RATE_LIMITED with Retry-After).`,
    `- Sponsored deposits (batch-settlement deposit payloads): ${c.DEPOSIT_LIMIT_PER_PAYER_PER_HOUR} per hour per payer and ${c.DEPOSIT_LIMIT_PER_IP_PER_HOUR} per hour per IP (then 429 RATE_LIMITED with Retry-After).`,
    `- A voucher is refused with CHANNEL_EXPIRING within ${c.VOUCHER_EXPIRY_SAFETY_LEDGERS} ledgers of the channel’s expiry (judged on a conservative estimate of the current ledger that keeps running while the ledger does not answer).`,
    `- Manual claim: at least ${c.MANUAL_CLAIM_MIN} base units unclaimed, once per ${c.MANUAL_CLAIM_COOLDOWN_SECONDS} s per channel.`,
    c.IP_COSTLY_LIMIT_PER_MINUTE > 0
      ? `- Costly requests (POST /channels/{id}/claim, POST /receipts/{id}/attest, POST /v1/report, POST /demo/agent/run, POST /demo/owner/freeze, and GET /channels or GET /accounts/{address} answering over ${COSTLY} channels): ${c.IP_COSTLY_LIMIT_PER_MINUTE} per minute per IP (then 429 RATE_LIMITED with Retry-After).`
      : '- Costly requests: no per-IP limit on this facilitator.',
    `- Connections: ${c.CONN_MAX_PER_IP > 0 ? `${c.CONN_MAX_PER_IP} open per IP, ` : ''}${c.CONN_MAX_TOTAL} in all (the next gets 429 RATE_LIMITED with Retry-After and is closed); a connection without a request for ${c.CONN_IDLE_SECONDS} s is closed.`,
    `- GET /events: ${c.SSE_MAX_PER_IP} open streams per IP, ${c.SSE_MAX_TOTAL} in all; a stream whose client takes nothing for ${c.SSE_STALL_SECONDS} s is dropped (resume with Last-Event-ID).`,
    `- Stream sessions: ${c.STREAM_MAX_PER_CHANNEL} open per channel, ${c.STREAM_MAX_PER_PAYER} per payer, ${c.STREAM_MAX_PER_PAYEE} per seller, ${c.STREAM_MAX_TOTAL} in all, ended (ABORTED) after ${c.STREAM_IDLE_SECONDS} s idle; POST /streams/{id}/wait waits 1–30 s (default 10).`,
    '- POST /v1/report must be signed by the transaction’s source (a smart account: its owner or agent key) over sha256("svc:report:v1" ‖ network id ‖ RFC 8785 JSON of { account, tx, kind?, details? }).',
    `- Pages: GET /accounts/{address}/ledger and GET /receipts return 50 by default, at most 200 (cursor = the previous page’s nextCursor); GET /discovery/resources 50 by default, at most 200 (limit, offset); GET /float \`history\` 200 samples by default, at most 500. GET /channels is not paginated (a list of over ${PAGE} channels may be up to ${REUSE_MS / 1000} s old).`,
    '- Request bodies: at most 64 KiB.',
    '',
  ];
}

function endpoints(routes: readonly RouteDoc[]): string[] {
  return ['## Endpoints', '', ...routes.map((r) => `- ${r.method} ${openApiPath(r.url)}: ${r.summary}`), ''];
}

function exampleFlow(i: LlmsInput): string[] {
  const book = i.demo.find((p) => p.unit === 'request');
  const ticker = i.demo.find((p) => p.unit === 'second');
  const deposit =
    i.demo.reduce((max, p) => (BigInt(p.minDeposit) > max ? BigInt(p.minDeposit) : max), 0n) || 5_000_000n;
  const price = book?.price ?? '<accepts[0].amount>';
  // Without the demo seller the flow is the same against any metered resource (the catalog lists them).
  const url = book ? `$BASE${book.path}` : '$URL';
  const tsUrl = book ? `\`\${BASE}${book.path}\`` : 'URL';
  return [
    '## Example flow',
    '',
    '```sh',
    `BASE=${i.baseUrl}`,
    ...(book ? [] : ['URL=<a metered resource, e.g. an item of GET $BASE/discovery/resources>']),
    '# 1. Ask: a 402 with the terms (the same object base64-encoded in PAYMENT-REQUIRED)',
    `curl -i ${url}`,
    ...(i.ledgerServed
      ? [
          '# 2. Fund a test account (G…) and open a channel to accepts[0].payTo: a signed channel.open',
          '#    transaction (see Ledger transactions) to POST $BASE/ledger/tx; the answer’s result.channelId is your channel',
          `curl -s -X POST $BASE/ledger/faucet -H 'content-type: application/json' -d '{"address":"G…"}'`,
        ]
      : ['# 2. Open a channel to accepts[0].payTo on the ledger, with your voucher key']),
    `# 3. Sign a voucher for cumulative ${price} (the bytes above), then pay`,
    `curl -i ${url} -H "PAYMENT-SIGNATURE: $(printf '%s' '{"x402Version":2,"accepted":<accepts[0]>,"payload":{"channelId":"<id>","cumulative":"${price}","signature":"<128 hex>"}}' | base64 -w0)"`,
    '#    200 with the resource; PAYMENT-RESPONSE carries the signed receipt. Next request: cumulative + price.',
    '# 4. Check the channel and the receipt',
    'curl -s $BASE/channels/<id>',
    'curl -s $BASE/receipts/<receipt id>/verify',
    '```',
    '',
    `The same with the TypeScript SDK (@svc/sdk)${ticker ? ', a stream included' : ''}:`,
    '',
    '```ts',
    "import { ChannelSigner, LocalLedgerClient, payFetch, randomKeypair, streamPaid } from '@svc/sdk';",
    'const ledger = new LocalLedgerClient(`${BASE}/ledger`);',
    'const info = await ledger.info();',
    'const payer = randomKeypair(), voucherKey = randomKeypair();',
    'await ledger.faucet(payer.address);',
    `const terms = await (await fetch(${tsUrl})).json(); // the 402`,
    'const payee = terms.accepts[0].payTo;',
    `const deposit = ${deposit}n; // at least extra.minDeposit`,
    'const { channelId } = await ledger.openChannel({ payer, payee, deposit, voucherKey });',
    'const signer = new ChannelSigner({ channelId, deposit, voucherKey, payee, networkPassphrase: info.passphrase, channelContract: info.contracts.channel, network: info.network, asset: info.contracts.asset });',
    `const res = await payFetch(${tsUrl}, {}, { signer }); // res.payment.receipt`,
    ...(ticker
      ? [
          `const run = await streamPaid({ url: \`\${BASE}${ticker.path}?seconds=30\`, signer, onEvent: (e) => console.log(e.event, e.data) });`,
        ]
      : []),
    '```',
    '',
  ];
}
