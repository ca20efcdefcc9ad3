// GET /ledger/pool (the credit pool, read-only) and HttpLedger.getPool: amounts as decimal
// strings on the wire, exact bigints back (far beyond 2^64), 404 / null where a ledger has no pool.
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpLedger, ledgerRoutes, startLedgerServer } from '../src/index.js';
import type { Ledger, LedgerFaucet, LedgerServer } from '../src/index.js';
import { Actor, tempDir } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';
import { borrower, openLine, POOL } from './helpers/pool.js';

const HUGE = 10n ** 30n + 7n; // 31 digits: no double holds it

describe('GET /ledger/pool', () => {
  let tmp: ReturnType<typeof tempDir>;
  let server: LedgerServer;

  beforeEach(async () => {
    tmp = tempDir();
    server = await startLedgerServer({ port: 0, dataDir: tmp.dir, clock: new FakeClock(), faucet: { amount: HUGE } });
  });

  afterEach(async () => {
    await server.close();
    tmp.remove();
  });

  it('answers the pool with decimal strings; HttpLedger parses it back to the same bigints', async () => {
    const ledger = server.ledger;
    const [investor, owner, payee] = [new Actor(ledger), new Actor(ledger), new Actor(ledger)];
    await ledger.faucet(investor.address, HUGE);
    expect((await investor.send('pool.deposit', { amount: HUGE.toString() })).status).toBe('SUCCESS');
    const sa = await borrower(ledger, owner, payee.address, 20_000_000n);
    const opened = await openLine(owner, sa.address, 100_000_000n);

    const eventsBefore = (await ledger.events(null, 1000)).events;
    const res = await fetch(`${server.url}/pool`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      address: POOL,
      size: '1000000000000000000000000000007',
      idle: '999999999999999999999900000007',
      lent: '100000000',
      totalShares: '1000000000000000000000000000007',
      sharePrice: '10000000',
      utilizationBps: 0, // 10^8 × 10,000 / (10^30 + 7) rounds down to 0
      liquidationThresholdBps: 11000,
      lines: [
        {
          account: sa.address,
          debt: '102000000',
          value: '120000000',
          healthBps: 11764,
          liquidatable: false,
          openedAt: opened.ts,
        },
      ],
      positions: [
        {
          address: investor.address,
          shares: '1000000000000000000000000000007',
          value: '1000000000000000000000000000007',
        },
      ],
    });

    const viaHttp = await new HttpLedger({ url: server.url }).getPool();
    expect(viaHttp).toEqual(await ledger.getPool());
    expect(viaHttp?.size).toBe(HUGE);
    expect(viaHttp?.lines[0]?.debt).toBe(102_000_000n);
    // Reading it submits nothing: no event, no seq taken.
    expect((await ledger.events(null, 1000)).events).toEqual(eventsBefore);
    expect(await investor.seq()).toBe(1);
  });

  it('is 404 on a ledger without a credit pool, and HttpLedger.getPool() is then null', async () => {
    const local = server.ledger;
    // The same ledger behind a port that has no getPool (as StellarLedger has none).
    const bare: Ledger & LedgerFaucet = {
      info: () => local.info(),
      latestLedger: () => local.latestLedger(),
      getChannel: (id) => local.getChannel(id),
      getAccount: (address) => local.getAccount(address),
      getTx: (hash) => local.getTx(hash),
      submit: (tx) => local.submit(tx),
      claim: (args, signer) => local.claim(args, signer),
      claimMany: (rows, signer) => local.claimMany(rows, signer),
      refund: (args, signer) => local.refund(args, signer),
      events: (cursor, limit) => local.events(cursor, limit),
      faucet: (address, amount) => local.faucet(address, amount),
      close: () => Promise.resolve(),
    };
    const app = Fastify();
    await app.register(ledgerRoutes, { prefix: '/ledger', ledger: bare });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${url}/ledger/pool`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'NOT_FOUND', source: 'ledger' });
      expect(await new HttpLedger({ url: `${url}/ledger` }).getPool()).toBeNull();
    } finally {
      await app.close();
    }
  });
});
