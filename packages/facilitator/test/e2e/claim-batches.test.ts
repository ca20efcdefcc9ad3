// The claim scheduler claims many channels in one transaction: a pass groups every due channel
// (any payee, either scheme) into `claim_many` transactions of at most MAX_CLAIMS_PER_TX rows, and
// each channel's claim is recorded once — its settlement, revenue and metrics as if claimed alone.
// A row the contract refuses (a channel its payee closed meanwhile) does not sink the others: the
// contract takes all rows or none, so the claimer sets the refused row aside and sends the rest
// again. Over real HTTP, on SQLite and on PostgreSQL.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SCHEME, decodeJsonHeader, randomKeypair } from '@svc/core';
import type { BatchRequirements, Keypair, PaymentRequired } from '@svc/core';
import { HttpLedger, MAX_CLAIMS_PER_TX, startLedgerServer } from '@svc/ledger';
import type { Ledger, LedgerServer } from '@svc/ledger';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import type { PgDatabase } from '../helpers/pg.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';

const pg = await pgEnabled();
const PRICE = 1000n;
const BATCH_PRICE = 5000n;

interface LedgerClaim {
  tx: string;
  channelId: bigint;
  amount: bigint;
  cumulative: bigint;
}

/** Every `channel.claimed` event of a ledger, read over its HTTP API (GET …/events). */
async function ledgerClaims(ledgerUrl: string): Promise<LedgerClaim[]> {
  const out: LedgerClaim[] = [];
  let cursor: string | null = null;
  for (;;) {
    const url = new URL(`${ledgerUrl}/events`);
    url.searchParams.set('limit', '500');
    if (cursor !== null) url.searchParams.set('cursor', cursor);
    const page = (await (await fetch(url)).json()) as {
      events: { type: string; tx: string; data: Record<string, string> }[];
      cursor: string | null;
    };
    for (const e of page.events)
      if (e.type === 'channel.claimed')
        out.push({
          tx: e.tx,
          channelId: BigInt(e.data['channelId']!),
          amount: BigInt(e.data['amount']!),
          cumulative: BigInt(e.data['cumulative']!),
        });
    if (page.events.length < 500) return out;
    cursor = page.cursor;
  }
}

async function revenueTotals(h: Harness, payTo: string): Promise<Record<string, string | number>> {
  const res = await fetch(`${h.url}/sellers/${payTo}/revenue`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { totals: Record<string, string | number> }).totals;
}

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** svc_claims_total{outcome} and svc_claimed_vouchers_total, scraped. */
async function claimMetrics(h: Harness, outcome: string): Promise<{ claims: number; vouchers: number }> {
  const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  const m = parsePrometheusText(await res.text());
  return { claims: m.value('svc_claims_total', { outcome }), vouchers: m.value('svc_claimed_vouchers_total') };
}

const stores = [
  { name: 'SQLite', enabled: true },
  { name: 'PostgreSQL', enabled: pg },
];

describe.each(stores)('claims across channels in one transaction ($name)', ({ name, enabled }) => {
  let db: PgDatabase | undefined;
  let h: Harness;
  let batchTerms: BatchRequirements;

  beforeAll(async () => {
    if (!enabled) return;
    db = name === 'PostgreSQL' ? await createPgDatabase() : undefined;
    h = await startHarness({
      ...(db ? { DATABASE_URL: db.url } : {}),
      FACILITATOR_SECRET: randomBytes(32).toString('hex'),
      METRICS_TOKEN,
      CLAIM_INTERVAL_SECONDS: '3600',
      CLAIM_THRESHOLD: '1',
      IP_RATE_LIMIT_PER_MINUTE: '0',
    });
    const book = await fetch(`${h.url}/demo/book`);
    const decoded = decodeJsonHeader(book.headers.get('payment-required')!);
    const required = decoded.ok ? (decoded.value as PaymentRequired) : (null as never);
    batchTerms = required.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await db?.drop();
  });

  /** A batch-settlement request of `ceiling` that cost `charged`: /verify, then /settle. */
  async function batchPay(b: Buyer, ceiling: bigint, charged: bigint): Promise<void> {
    const v = b.signer.sign(ceiling);
    const terms = { ...batchTerms, payTo: b.payee };
    for (const route of ['/verify', '/settle'] as const) {
      const res = await fetch(`${h.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: {
            x402Version: 2,
            accepted: terms,
            payload: {
              type: 'voucher',
              voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
            },
            resource: { url: `${h.url}/r` },
          },
          paymentRequirements: { ...terms, amount: (route === '/settle' ? charged : BATCH_PRICE).toString() },
          method: 'GET',
        }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject(route === '/verify' ? { isValid: true } : { success: true });
    }
  }

  it.runIf(enabled)(
    'one scheduler pass claims 30 channels of 4 sellers in ceil(30 / bound) transactions, each channel its amount, once',
    async () => {
      const sellers = Array.from({ length: 4 }, () => randomKeypair().address);
      const owed = new Map<bigint, { payee: string; amount: bigint; vouchers: number }>();
      const buyers: Buyer[] = [];
      for (let i = 0; i < 30; i++) buyers.push(await h.buyer({ payee: sellers[i % 4]!, batch: i >= 26 }));
      await Promise.all(
        buyers.map(async (b, i) => {
          if (i >= 26) {
            // batch-settlement: charged below the voucher's ceiling, a row the facilitator authorises.
            await batchPay(b, BATCH_PRICE, 1200n + BigInt(i));
            owed.set(b.channelId, { payee: b.payee, amount: 1200n + BigInt(i), vouchers: 1 });
            return;
          }
          const vouchers = 1 + (i % 5);
          const terms = h.requirements({ payTo: b.payee, amount: PRICE.toString() });
          for (let k = 1; k <= vouchers; k++)
            expect((await h.verify(b.signer.sign(PRICE * BigInt(k)), terms)).body['isValid']).toBe(true);
          owed.set(b.channelId, { payee: b.payee, amount: PRICE * BigInt(vouchers), vouchers });
        }),
      );
      const balancesBefore = new Map(
        await Promise.all(sellers.map(async (s) => [s, await h.ledger.balance(s)] as const)),
      );

      await h.f.scheduler.tick();

      // On the ledger: every channel claimed once, exactly what it owed, in ceil(n / bound) transactions.
      const claims = (await ledgerClaims(`${h.url}/ledger`)).filter((c) => owed.has(c.channelId));
      expect(claims).toHaveLength(30);
      const txs = new Map<string, number>();
      for (const c of claims) {
        txs.set(c.tx, (txs.get(c.tx) ?? 0) + 1);
        expect({ id: c.channelId, amount: c.amount, cumulative: c.cumulative }).toEqual({
          id: c.channelId,
          amount: owed.get(c.channelId)!.amount,
          cumulative: owed.get(c.channelId)!.amount,
        });
      }
      expect(new Set(claims.map((c) => c.channelId)).size).toBe(30);
      expect(txs.size).toBe(Math.ceil(30 / MAX_CLAIMS_PER_TX));
      expect([...txs.values()].sort((a, b) => b - a)).toEqual([MAX_CLAIMS_PER_TX, 30 - MAX_CLAIMS_PER_TX]);
      for (const [id, o] of owed) expect((await h.ledger.channel(id))?.claimed).toBe(o.amount.toString());
      for (const s of sellers) {
        const due = [...owed.values()].filter((o) => o.payee === s).reduce((sum, o) => sum + o.amount, 0n);
        expect(await h.ledger.balance(s)).toBe(balancesBefore.get(s)! + due);
      }

      // In the books: one settlement per channel, with its own amount and vouchers, also after the
      // ledger watcher went over the same transactions.
      await h.f.watcher.tick();
      const store = h.f.store;
      for (const [id, o] of owed) {
        const recorded = await store.events({ channelId: id, types: ['channel.claimed'], limit: 10 });
        expect(recorded.map((e) => e.data)).toEqual([
          expect.objectContaining({ amount: o.amount.toString(), vouchersCovered: o.vouchers }),
        ]);
        expect(await store.getChannel(id)).toMatchObject({ claimed: o.amount, charged: o.amount });
      }
      for (const s of sellers) {
        const mine = [...owed.values()].filter((o) => o.payee === s);
        const due = mine.reduce((sum, o) => sum + o.amount, 0n);
        const totals = await revenueTotals(h, s);
        expect(totals).toMatchObject({
          earned: due.toString(),
          settled: due.toString(),
          receivable: '0',
          lost: '0',
          settlements: mine.length,
        });
      }
      const vouchers = [...owed.values()].reduce((sum, o) => sum + o.vouchers, 0);
      expect(await claimMetrics(h, 'claimed')).toEqual({ claims: 30, vouchers });
    },
    180_000,
  );
});

/**
 * The facilitator's port to the standalone ledger, counting its claim transactions. `named: false`
 * answers a refused claim_many as Soroban does: with the contract's code, not the row (the local
 * ledger's message starts `claims[i]: `).
 */
function countingLedger(url: string, named: boolean) {
  const http = new HttpLedger({ url });
  const calls = { claim: 0, claimMany: 0 };
  const ledger: Ledger = {
    info: () => http.info(),
    latestLedger: () => http.latestLedger(),
    getChannel: (id) => http.getChannel(id),
    getAccount: (a) => http.getAccount(a),
    getTx: (hash) => http.getTx(hash),
    submit: (tx) => http.submit(tx),
    refund: (args, signer) => http.refund(args, signer),
    events: (cursor, limit) => http.events(cursor, limit),
    close: () => http.close(),
    claim: (args, signer) => {
      calls.claim++;
      return http.claim(args, signer);
    },
    claimMany: async (rows, signer) => {
      calls.claimMany++;
      const result = await http.claimMany(rows, signer);
      if (named || result.message === undefined) return result;
      return { ...result, message: result.message.replace(/^claims\[\d+\]: /, '') };
    },
  };
  return { ledger, calls };
}

const refusals = stores.flatMap((store) => [
  { ...store, named: true, how: 'the ledger names the row' },
  { ...store, named: false, how: 'only the code, as Soroban: halves' },
]);

describe.each(refusals)('a row the contract refuses ($name, $how)', ({ name, enabled, named }) => {
  let db: PgDatabase | undefined;
  let ledger: LedgerServer;
  let ledgerDir: string;
  let h: Harness;
  let calls: { claim: number; claimMany: number };

  beforeAll(async () => {
    if (!enabled) return;
    db = name === 'PostgreSQL' ? await createPgDatabase() : undefined;
    ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-claim-batches-ledger-'));
    ledger = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    const port = countingLedger(ledger.url, named);
    calls = port.calls;
    h = await startHarness(
      {
        ...(db ? { DATABASE_URL: db.url } : {}),
        FACILITATOR_SECRET: randomBytes(32).toString('hex'),
        METRICS_TOKEN,
        LEDGER_URL: ledger.url,
        CLAIM_INTERVAL_SECONDS: '3600',
        CLAIM_THRESHOLD: '1',
        IP_RATE_LIMIT_PER_MINUTE: '0',
        DEMO: 'off',
      },
      { ledger: port.ledger },
    );
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await ledger?.close();
    await db?.drop();
    if (ledgerDir) fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it.runIf(enabled)(
    'sinks no other row: the channel closed meanwhile is reported, the others land',
    async () => {
      const sellers: Keypair[] = [randomKeypair(), randomKeypair()];
      const buyers: Buyer[] = [];
      for (let i = 0; i < 6; i++) buyers.push(await h.buyer({ payee: sellers[i % 2]!.address }));
      for (const [i, b] of buyers.entries()) {
        const terms = h.requirements({ payTo: b.payee, amount: PRICE.toString() });
        for (let k = 1; k <= i + 1; k++)
          expect((await h.verify(b.signer.sign(PRICE * BigInt(k)), terms)).body['isValid']).toBe(true);
      }
      // The facilitator does not hear of the close before its pass: its watcher is held.
      await h.f.watcher.tick();
      await h.f.watcher.stop();
      const closed = buyers[3]!;
      await h.ledger.closeChannel({ signer: sellers[1]!, channelId: closed.channelId });

      await h.f.scheduler.tick();

      // Most owed first: buyer i owes i + 1 vouchers, so the rows go 5, 4, 3 (closed), 2, 1, 0.
      const claims = await ledgerClaims(ledger.url);
      const owedOrder = [5, 4, 2, 1, 0].map((i) => buyers[i]!.channelId);
      expect(claims.map((c) => c.channelId)).toEqual(owedOrder);
      if (named) {
        // The refused batch, then the five others in one transaction.
        expect(new Set(claims.map((c) => c.tx)).size).toBe(1);
        expect(calls).toEqual({ claimMany: 2, claim: 0 });
      } else {
        // [5 4 3 2 1 0] refused → [5 4 3] refused → [5 4] lands, [3] alone refused (a plain claim); [2 1 0] lands.
        expect(new Set(claims.map((c) => c.tx)).size).toBe(2);
        expect(calls).toEqual({ claimMany: 4, claim: 1 });
      }
      for (const [i, b] of buyers.entries()) {
        const onLedger = await h.ledger.channel(b.channelId);
        expect(onLedger?.claimed).toBe(b === closed ? '0' : (PRICE * BigInt(i + 1)).toString());
      }
      const store = h.f.store;
      const rejected = await store.events({ types: ['chain.rejected'], limit: 10 });
      expect(rejected.map((e) => e.data)).toEqual([
        expect.objectContaining({ channelId: closed.channelId.toString(), code: 21, codeName: 'CHANNEL_CLOSED' }),
      ]);
      // The refused row's channel was read again from the ledger: closed, what it owed lost.
      expect(await store.getChannel(closed.channelId)).toMatchObject({ status: 'closed', claimed: 0n });

      // The watcher catches up: nothing is recorded twice, and the books balance to the base unit.
      h.f.watcher.start();
      await h.f.watcher.tick();
      for (const [i, b] of buyers.entries()) {
        const recorded = await store.events({ channelId: b.channelId, types: ['channel.claimed'], limit: 10 });
        expect(recorded.map((e) => e.data['amount'])).toEqual(b === closed ? [] : [(PRICE * BigInt(i + 1)).toString()]);
      }
      for (const seller of sellers) {
        const mine = buyers
          .map((b, i) => ({ b, amount: PRICE * BigInt(i + 1) }))
          .filter((x) => x.b.payee === seller.address);
        const earned = mine.reduce((sum, x) => sum + x.amount, 0n);
        const lost = mine.filter((x) => x.b === closed).reduce((sum, x) => sum + x.amount, 0n);
        const totals = await revenueTotals(h, seller.address);
        expect(totals).toMatchObject({
          earned: earned.toString(),
          settled: (earned - lost).toString(),
          receivable: '0',
          lost: lost.toString(),
        });
      }
      expect(await claimMetrics(h, 'claimed')).toEqual({ claims: 5, vouchers: 1 + 2 + 3 + 5 + 6 });
      expect((await claimMetrics(h, 'rejected')).claims).toBe(1);
    },
    120_000,
  );
});
