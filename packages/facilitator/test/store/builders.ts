// Builders for store tests: real signed receipts, channel records with overrides, and the ops of
// an accepted voucher exactly as the verifier writes them (port.ts example).
import { accountFromPublicKey, contractFromRaw, fromHex, keypairFromSeed, signReceipt } from '@svc/core';
import type { Receipt } from '@svc/core';
import type { ChannelRecord, NewEvent, StreamLimits, StreamRecord, WriteOp } from '../../src/store/index.js';

export const SIGNER = keypairFromSeed(fromHex('11'.repeat(32), 32));
export const PAYER = keypairFromSeed(fromHex('22'.repeat(32), 32)).address;
export const PAYEE = keypairFromSeed(fromHex('33'.repeat(32), 32)).address;
export const OTHER_PAYEE = keypairFromSeed(fromHex('44'.repeat(32), 32)).address;
export const OTHER_PAYER = keypairFromSeed(fromHex('55'.repeat(32), 32)).address;
export const I128_MAX = 170141183460469231731687303715884105727n;
export const U64_MAX = 18446744073709551615n;
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

/** ISO 8601 with milliseconds, `n` seconds after a fixed start. */
export function iso(n: number): string {
  return new Date(T0 + n * 1000).toISOString();
}

/** A well-formed 64-byte signature in hex, different for every n. */
export function sig(n: bigint): string {
  return n.toString(16).padStart(128, '0');
}

export function channel(id: bigint, over: Partial<ChannelRecord> = {}): ChannelRecord {
  return {
    id,
    network: 'stellar:local',
    channelContract: 'CCHANNELCONTRACT',
    payer: PAYER,
    payee: PAYEE,
    asset: 'CASSET',
    voucherKey: 'ab'.repeat(32),
    deposit: 1_000_000n,
    claimed: 0n,
    lastAccepted: 0n,
    lastSignature: null,
    charged: 0n,
    receiverAuthorizer: null,
    refundNonce: 0,
    reservation: null,
    expiryLedger: 5_000,
    status: 'open',
    vouchers: 0,
    vouchersClaimed: 0,
    openedAt: iso(0),
    lastVoucherAt: null,
    closedAt: null,
    refunded: null,
    createdAt: iso(0),
    ...over,
  };
}

/** An SQL literal both SQLite and PostgreSQL read alike (text quoted; PostgreSQL casts a quoted decimal to numeric). */
function sqlLiteral(value: string | number | bigint | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  return `'${value.toString().replaceAll("'", "''")}'`;
}

/**
 * The INSERT of a channel row as versions 1 to 5 of the schema hold it (before batch-settlement),
 * for a database an older build left: that build's store cannot be run, so its rows are written
 * in SQL. Ids are padded as SQLite keys them; PostgreSQL reads the same text as a numeric.
 */
export function legacyChannelSql(c: ChannelRecord): string {
  const row: Record<string, string | number | bigint | null> = {
    id: c.id.toString().padStart(20, '0'),
    network: c.network,
    channel_contract: c.channelContract,
    payer: c.payer,
    payee: c.payee,
    asset: c.asset,
    voucher_key: c.voucherKey,
    deposit: c.deposit,
    claimed: c.claimed,
    last_accepted: c.lastAccepted,
    last_signature: c.lastSignature,
    expiry_ledger: c.expiryLedger,
    status: c.status,
    vouchers: c.vouchers,
    vouchers_claimed: c.vouchersClaimed,
    opened_at: c.openedAt,
    last_voucher_at: c.lastVoucherAt,
    closed_at: c.closedAt,
    refunded: c.refunded,
    created_at: c.createdAt,
  };
  return `INSERT INTO channels (${Object.keys(row).join(', ')}) VALUES (${Object.values(row).map(sqlLiteral).join(', ')})`;
}

export function receipt(
  channelId: bigint,
  cumulative: bigint,
  over: { amount?: bigint; payee?: string; ts?: string } = {},
): Receipt {
  return signReceipt(SIGNER, {
    v: 1,
    network: 'stellar:local',
    signer: SIGNER.address,
    channelId: channelId.toString(),
    payer: PAYER,
    payee: over.payee ?? PAYEE,
    resource: 'https://seller.example/demo/book?q=ü&x=1',
    method: 'GET',
    unit: 'request',
    amount: (over.amount ?? 5_000n).toString(),
    cumulative: cumulative.toString(),
    requestHash: null,
    ts: over.ts ?? iso(1),
  });
}

export function event(over: Partial<NewEvent> = {}): NewEvent {
  return { type: 'voucher.accepted', source: 'facilitator', ts: iso(2), accounts: [PAYER, PAYEE], data: {}, ...over };
}

/** The ops of one accepted voucher: the compare-and-set, its receipt, its event. */
export function acceptOps(
  channelId: bigint,
  expected: bigint,
  cumulative: bigint,
  at = iso(3),
): { ops: WriteOp[]; receipt: Receipt } {
  const r = receipt(channelId, cumulative, { amount: cumulative - expected, ts: at });
  const ops: WriteOp[] = [
    { op: 'channel.advance', channelId, expected, cumulative, signature: sig(cumulative), at },
    { op: 'receipt', receipt: r },
    {
      op: 'event',
      event: event({
        ts: at,
        channelId,
        data: {
          channelId: channelId.toString(),
          cumulative: cumulative.toString(),
          delta: (cumulative - expected).toString(),
          receiptId: r.id,
        },
      }),
    },
  ];
  return { ops, receipt: r };
}

type ReserveOp = Extract<WriteOp, { op: 'channel.reserve' }>;
type ChargeOp = Extract<WriteOp, { op: 'channel.charge' }>;

/** A batch-settlement /verify's reservation of a channel for payment `fingerprint`, live for a minute. */
export function reserveOp(channelId: bigint, expectedCharged: bigint, fingerprint: string, at = iso(10)): ReserveOp {
  const until = new Date(Date.parse(at) + 60_000).toISOString();
  return { op: 'channel.reserve', channelId, expectedCharged, fingerprint, until, at };
}

/** A batch-settlement charge of `charge` under a voucher whose ceiling is `ceiling` (signed sig(ceiling)). */
export function chargeOp(
  channelId: bigint,
  expectedCharged: bigint,
  charge: bigint,
  ceiling: bigint,
  over: Partial<Omit<ChargeOp, 'op' | 'channelId' | 'expectedCharged' | 'charge' | 'ceiling'>> = {},
): ChargeOp {
  return {
    op: 'channel.charge',
    channelId,
    expectedCharged,
    charge,
    ceiling,
    signature: sig(ceiling),
    fingerprint: 'payment-a',
    at: iso(20),
    ...over,
  };
}

/** A stream id (32 lowercase hex), different for every n. */
export function streamId(n: number): string {
  return n.toString(16).padStart(32, '0');
}

/** A receipt id (64 lowercase hex), different for every n; sessions only bind the id. */
export function receiptId(n: number): string {
  return n.toString(16).padStart(64, 'c');
}

/** The spec's session limits (4 open per channel, 1000 in all). */
export const STREAM_LIMITS = { maxPerChannel: 4, maxPerPayer: 1_000, maxPerPayee: 1_000, maxTotal: 1_000 } as const;

/** An open session just after its first slice, `n` seconds after the start; receipt `receiptId(n)`. */
export function stream(n: number, over: Partial<StreamRecord> = {}): StreamRecord {
  return {
    id: streamId(n),
    channelId: 1n,
    payer: PAYER,
    payTo: PAYEE,
    resource: 'https://seller.example/demo/chat?q=ü',
    unit: 'token',
    sliceCost: 1_000n,
    initialCharge: 1_000n,
    receiptId: receiptId(n),
    required: 2_000n,
    paid: 1_000n,
    charged: 1_000n,
    vouchers: 1,
    pendingReceiptId: null,
    status: 'open',
    reason: null,
    units: null,
    openedAt: iso(n),
    lastActivityAt: iso(n),
    endedAt: null,
    scheme: 'channel',
    ...over,
  };
}

export function openStream(st: StreamRecord, limits: Partial<StreamLimits> = {}): WriteOp {
  return { op: 'stream.open', stream: st, ...STREAM_LIMITS, ...limits };
}

/** A valid G… address, different for every n, without deriving a key pair (cheap by the thousand). */
export function account(n: number): string {
  const key = new Uint8Array(32);
  new DataView(key.buffer).setUint32(0, n);
  key[31] = 0xa5;
  return accountFromPublicKey(key);
}

/** A valid C… address, different for every n. */
export function contract(n: number): string {
  const raw = new Uint8Array(32);
  new DataView(raw.buffer).setUint32(0, n);
  return contractFromRaw(raw);
}

type CatalogOp = Extract<WriteOp, { op: 'catalog.record' }>;

/** A verified payment for a catalog listing, as the verifier records it; `n` varies the terms and the time. */
export function catalogRecord(n: number, over: Partial<Omit<CatalogOp, 'op'>> = {}): CatalogOp {
  return {
    op: 'catalog.record',
    resource: 'https://seller.example/demo/book',
    payTo: PAYEE,
    payer: PAYER,
    payments: 1,
    accepts: [
      {
        scheme: 'channel',
        network: 'stellar:local',
        amount: (5_000 + n).toString(),
        payTo: over.payTo ?? PAYEE,
        extra: { unit: 'request', zeta: 1, alpha: ['ü', null, true, 1.5] },
      },
    ],
    bazaar: { info: { input: { type: 'http', method: 'GET', n }, output: { type: 'json' } }, schema: { b: 2, a: 1 } },
    description: `A demo book, edition ${n} — ü`,
    mimeType: 'application/json',
    at: iso(n),
    ...over,
  };
}
