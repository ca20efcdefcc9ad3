import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { channelIdOf, randomKeypair, signLedgerTx } from '@svc/core';
import { LEDGER_BODY_LIMIT, LEDGER_ROUTES, LocalLedger, ledgerRoutes, startLedgerServer } from '../src/index.js';
import type { FaucetOptions, LedgerServer } from '../src/index.js';
import { PASS, tempDir, voucher } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';

const ERROR_KEYS = ['error', 'message', 'source'];

describe('ledger HTTP routes (docs/protocol.md#the-local-ledger)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let clock: FakeClock;
  let server: LedgerServer;

  async function start(faucet?: FaucetOptions) {
    server = await startLedgerServer({ port: 0, dataDir: tmp.dir, clock, ...(faucet ? { faucet } : {}) });
  }

  beforeEach(async () => {
    tmp = tempDir();
    clock = new FakeClock();
    await start();
  });

  afterEach(async () => {
    await server.close();
    tmp.remove();
  });

  function post(path: string, body: string, contentType = 'application/json') {
    return fetch(server.url + path, { method: 'POST', headers: { 'content-type': contentType }, body });
  }

  async function expectError(res: Response, status: number, error: string): Promise<string> {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(ERROR_KEYS);
    expect(body).toMatchObject({ error, source: 'ledger' });
    expect(String(body['message'])).not.toMatch(/\n\s+at /);
    return String(body['message']);
  }

  it('GET /info answers the network, the clock and the contracts', async () => {
    clock.advance(25_000);
    const res = await fetch(`${server.url}/info`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      network: 'stellar:local',
      passphrase: PASS,
      latestLedger: 6,
      ledgerSeconds: 5,
      contracts: server.ledger.contracts,
      asset: { code: 'USDC', decimals: 7 },
    });
  });

  it('bad JSON is 400 BAD_REQUEST, never a 500', async () => {
    await expectError(await post('/tx', '{"source":'), 400, 'BAD_REQUEST');
    await expectError(await post('/faucet', '{nope}'), 400, 'BAD_REQUEST');
    await expectError(await post('/tx', ''), 400, 'BAD_REQUEST');
    await expectError(await post('/tx', 'null'), 400, 'BAD_REQUEST');
    await expectError(await post('/tx', '[1,2]'), 400, 'BAD_REQUEST');
    await expectError(await post('/tx', '{"__proto__":{"x":1}}'), 400, 'BAD_REQUEST');
  });

  it('an oversized body is 413 with the error body; another content type 415', async () => {
    const big = JSON.stringify({ address: 'G', pad: 'x'.repeat(LEDGER_BODY_LIMIT) });
    expect(await expectError(await post('/faucet', big), 413, 'BAD_REQUEST')).toMatch(/too large/);
    await expectError(await post('/tx', '<tx/>', 'application/xml'), 415, 'BAD_REQUEST');
    await expectError(await post('/tx', 'hello', 'text/plain'), 400, 'BAD_REQUEST');
  });

  it('a faucet request with a bad amount or address is 400; amounts are decimal strings', async () => {
    const address = randomKeypair().address;
    for (const amount of ['1.5', '-1', '', '1e3', ' 5', 1000, null, (1n << 127n).toString()]) {
      await expectError(await post('/faucet', JSON.stringify({ address, amount })), 400, 'BAD_REQUEST');
    }
    await expectError(await post('/faucet', JSON.stringify({ address, amount: '100000000001' })), 400, 'BAD_REQUEST');
    await expectError(await post('/faucet', JSON.stringify({ address: 'GABC' })), 400, 'BAD_REQUEST');
    await expectError(await post('/faucet', JSON.stringify({ address, extra: 1 })), 400, 'BAD_REQUEST');
    const ok = await post('/faucet', JSON.stringify({ address, amount: '42' }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'SUCCESS', result: { amount: '42', balance: '42' } });
    const account = await fetch(`${server.url}/accounts/${address}`);
    expect(await account.json()).toEqual({
      address,
      seq: 0,
      balances: [{ asset: server.ledger.contracts.asset, amount: '42' }],
    });
  });

  it('the faucet over its limit is 429 RATE_LIMITED with Retry-After in whole seconds', async () => {
    await server.close();
    await start({ perAddressPerHour: 1 });
    const body = JSON.stringify({ address: randomKeypair().address });
    expect((await post('/faucet', body)).status).toBe(200);
    clock.advance(1500);
    const res = await post('/faucet', body);
    expect(res.headers.get('retry-after')).toBe('3599');
    await expectError(res, 429, 'RATE_LIMITED');
  });

  it('POST /tx: a refused tx is 400 with its reason, a FAILED one 200 with its code', async () => {
    const payer = randomKeypair();
    const tx = signLedgerTx(payer, PASS, {
      source: payer.address,
      seq: 1,
      op: 'transfer',
      args: { to: randomKeypair().address, amount: '5' },
    });
    const failed = await post('/tx', JSON.stringify(tx));
    expect(failed.status).toBe(200);
    expect(await failed.json()).toMatchObject({ status: 'FAILED', code: 27, events: [] });
    expect(await expectError(await post('/tx', JSON.stringify(tx)), 400, 'BAD_REQUEST')).toMatch(/seq/);
    expect(
      await expectError(
        await post('/tx', JSON.stringify({ ...tx, seq: 2, signature: 'ab'.repeat(64) })),
        400,
        'BAD_REQUEST',
      ),
    ).toMatch(/signature/);
    await expectError(await post('/tx', JSON.stringify({ ...tx, seq: '2' })), 400, 'BAD_REQUEST');
    await expectError(await post('/tx', JSON.stringify({ ...tx, extra: true })), 400, 'BAD_REQUEST');
  });

  it('channels and txs: unknown is 404 NOT_FOUND, malformed is 400; amounts are strings', async () => {
    await expectError(await fetch(`${server.url}/channels/99`), 404, 'NOT_FOUND');
    await expectError(await fetch(`${server.url}/channels/abc`), 400, 'BAD_REQUEST');
    await expectError(await fetch(`${server.url}/channels/1.5`), 400, 'BAD_REQUEST');
    await expectError(await fetch(`${server.url}/channels/-1`), 400, 'BAD_REQUEST');
    await expectError(await fetch(`${server.url}/channels/18446744073709551616`), 400, 'BAD_REQUEST');
    await expectError(await fetch(`${server.url}/channels/18446744073709551615`), 404, 'NOT_FOUND');
    await expectError(await fetch(`${server.url}/tx/${'0'.repeat(64)}`), 404, 'NOT_FOUND');
    await expectError(await fetch(`${server.url}/tx/xyz`), 400, 'BAD_REQUEST');
    await expectError(await fetch(`${server.url}/accounts/nobody`), 400, 'BAD_REQUEST');
    await expectError(await fetch(`${server.url}/no/such/route`), 404, 'NOT_FOUND');

    const payer = randomKeypair();
    const vk = randomKeypair();
    await server.ledger.faucet(payer.address);
    const open = signLedgerTx(payer, PASS, {
      source: payer.address,
      seq: 1,
      op: 'channel.open',
      args: {
        payee: randomKeypair().address,
        deposit: '123456789012345678901234567890',
        voucherKey: vk.publicKeyHex,
        expiryLedger: 99,
      },
    });
    expect(await (await post('/tx', JSON.stringify(open))).json()).toMatchObject({ status: 'FAILED', code: 27 });
    const open2 = signLedgerTx(payer, PASS, {
      source: payer.address,
      seq: 2,
      op: 'channel.open',
      args: { ...open.args, deposit: '5000' },
    });
    const id = channelIdOf(PASS, server.ledger.contracts.channel, vk.publicKey).toString();
    expect(await (await post('/tx', JSON.stringify(open2))).json()).toMatchObject({
      status: 'SUCCESS',
      result: { channelId: id },
    });
    const claim = signLedgerTx(payer, PASS, {
      source: payer.address,
      seq: 3,
      op: 'channel.claim',
      args: { channelId: id, cumulative: '300', signature: voucher(vk, id, 300n) },
    });
    const claimed = (await (await post('/tx', JSON.stringify(claim))).json()) as { hash: string };
    const channel = await fetch(`${server.url}/channels/${id}`);
    expect(channel.status).toBe(200);
    expect(await channel.json()).toEqual({
      id,
      payer: payer.address,
      payee: open.args['payee'],
      asset: server.ledger.contracts.asset,
      deposit: '5000',
      claimed: '300',
      voucherKey: vk.publicKeyHex,
      receiverAuthorizer: null,
      expiryLedger: 99,
      refundNonce: '0',
      open: true,
    });
    const tx = await fetch(`${server.url}/tx/${claimed.hash.toUpperCase()}`);
    expect(await tx.json()).toMatchObject({ hash: claimed.hash, status: 'SUCCESS', result: { amount: '300' } });
  });

  it('GET /events pages with cursor and limit, and validates both', async () => {
    for (let i = 0; i < 3; i++) await server.ledger.faucet(randomKeypair().address);
    const page = async (query: string) =>
      (await fetch(`${server.url}/events${query}`)).json() as Promise<{
        events: Array<{ id: string }>;
        cursor: string | null;
      }>;
    const all = await page('');
    expect(all.events.map((e) => e.id)).toEqual(['1', '2', '3']);
    expect(all.cursor).toBe('3');
    expect(await page('?limit=2')).toMatchObject({ cursor: '2', events: [{ id: '1' }, { id: '2' }] });
    expect(await page('?cursor=2&limit=2')).toMatchObject({ cursor: '3', events: [{ id: '3' }] });
    expect(await page('?cursor=3')).toEqual({ cursor: '3', events: [] });
    expect((await page('?limit=5000')).events).toHaveLength(3);
    for (const bad of ['?limit=0', '?limit=abc', '?cursor=-1', '?cursor=1.5', '?limit=1&limit=2']) {
      await expectError(await fetch(`${server.url}/events${bad}`), 400, 'BAD_REQUEST');
    }
  });

  it('never answers 500 to junk in any field of any route or op', async () => {
    const JUNK: unknown[] = [
      null,
      true,
      0,
      -1,
      1.5,
      1e300,
      2 ** 53,
      'abc',
      '',
      '1.5',
      '-0',
      '١٢٣',
      'x'.repeat(300),
      [],
      {},
      [1],
      { a: 1 },
      (1n << 200n).toString(),
    ];
    const keys = randomKeypair();
    const base = { source: keys.address, seq: 1, op: 'transfer', args: {}, signature: 'ab'.repeat(64) };
    const ARG_FIELDS: Record<string, string[]> = {
      transfer: ['to', 'amount'],
      'channel.open': ['payee', 'deposit', 'voucherKey', 'expiryLedger', 'receiverAuthorizer'],
      'channel.top_up': ['channelId', 'amount', 'expiryLedger'],
      'channel.claim': ['channelId', 'cumulative', 'signature'],
      'channel.claim_many': ['claims'],
      'channel.refund': ['channelId', 'amount', 'nonce'],
      'channel.close': ['channelId'],
      'account.create': ['owner', 'policy'],
      'account.set_policy': ['account', 'policy'],
      'account.freeze': ['account', 'frozen'],
      'dex.swap': ['sell', 'amount'],
    };
    const statuses = new Set<number>();
    const check = async (res: Promise<Response>) => {
      const r = await res;
      statuses.add(r.status);
      const text = await r.text();
      expect(r.status, text).toBeLessThan(500);
      if (r.status >= 400) expect(Object.keys(JSON.parse(text) as object).sort(), text).toEqual(ERROR_KEYS);
    };
    for (const junk of JUNK) {
      for (const field of Object.keys(base)) await check(post('/tx', JSON.stringify({ ...base, [field]: junk })));
      for (const [op, fields] of Object.entries(ARG_FIELDS)) {
        for (const field of fields) {
          const tx = signLedgerTx(keys, PASS, { source: keys.address, seq: 1, op, args: { [field]: junk } });
          await check(post('/tx', JSON.stringify(tx)));
        }
      }
      await check(post('/faucet', JSON.stringify({ address: junk })));
      await check(post('/faucet', JSON.stringify({ address: keys.address, amount: junk })));
      const segment = encodeURIComponent(typeof junk === 'string' ? junk : JSON.stringify(junk));
      for (const route of ['/channels/', '/tx/', '/accounts/', '/events?cursor=', '/events?limit='])
        await check(fetch(server.url + route + segment));
    }
    expect([...statuses].sort()).toEqual([200, 400, 404, 414]);
  });

  it('GET /accounts/:address answers a smart account’s state with amounts as decimal strings', async () => {
    const [owner, agent, payee] = [randomKeypair(), randomKeypair(), randomKeypair()];
    const huge = ((1n << 125n) + 7n).toString();
    const policy = {
      agentKey: agent.address,
      perTxCap: huge,
      dailyCap: huge,
      payees: [payee.address],
      expiresLedger: 5000,
    };
    const create = signLedgerTx(owner, PASS, {
      source: owner.address,
      seq: 1,
      op: 'account.create',
      args: { owner: owner.address, policy },
    });
    const created = (await (await post('/tx', JSON.stringify(create))).json()) as {
      status: string;
      result: { address: string };
    };
    expect(created.status).toBe('SUCCESS');
    const address = created.result.address;
    await post('/faucet', JSON.stringify({ address, amount: '900' }));
    const pay = signLedgerTx(agent, PASS, {
      source: address,
      seq: 1,
      op: 'transfer',
      args: { to: payee.address, amount: '250' },
    });
    expect(((await (await post('/tx', JSON.stringify(pay))).json()) as { status: string }).status).toBe('SUCCESS');
    const res = await fetch(`${server.url}/accounts/${address}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      address,
      seq: 1,
      balances: [{ asset: server.ledger.contracts.asset, amount: '650' }],
      account: { owner: owner.address, policy, frozen: false, spentToday: '250', day: '2026-11-22' },
    });
    // A plain account has no `account` member at all.
    expect(await (await fetch(`${server.url}/accounts/${payee.address}`)).json()).toEqual({
      address: payee.address,
      seq: 0,
      balances: [{ asset: server.ledger.contracts.asset, amount: '250' }],
    });
  });

  it('serves exactly its declarations (LEDGER_ROUTES), which hosts document: each answers as declared', async () => {
    const dir = tempDir();
    const ledger = await LocalLedger.open({ dataDir: dir.dir, clock });
    const app = Fastify();
    await app.register(ledgerRoutes, { prefix: '/ledger', ledger });
    await app.ready();
    const served = app
      .printRoutes({ commonPrefix: false, method: 'GET' })
      .concat(app.printRoutes({ commonPrefix: false, method: 'POST' }));
    for (const route of LEDGER_ROUTES)
      expect(app.hasRoute({ method: route.method, url: `/ledger${route.url}` })).toBe(true);
    // Every served path is declared (printRoutes lists each once per method asked).
    const declared = new Set(LEDGER_ROUTES.map((r) => `/ledger${r.url}`));
    const paths = [...served.matchAll(/(\/ledger\S*) \(/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(declared.has(path), path).toBe(true);
    // A route declaring a 404 answers it for what does not exist; one that does not, never does.
    const missing: Record<string, string> = {
      '/tx/:hash': `/ledger/tx/${'0'.repeat(64)}`,
      '/channels/:id': '/ledger/channels/424242',
      '/accounts/:address': `/ledger/accounts/${randomKeypair().address}`,
    };
    for (const route of LEDGER_ROUTES.filter((r) => r.method === 'GET' && r.url !== '/pool')) {
      const url = missing[route.url] ?? `/ledger${route.url}`;
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(route.notFound ? 404 : 200);
    }
    await app.close();
    await ledger.close();
    dir.remove();
  });

  it('mounts under whatever prefix the host app chooses, beside its own routes', async () => {
    const dir = tempDir();
    const ledger = await LocalLedger.open({ dataDir: dir.dir, clock });
    const app = Fastify();
    app.get('/health', () => ({ ok: true }));
    await app.register(ledgerRoutes, { prefix: '/chain', ledger });
    const info = await app.inject({ method: 'GET', url: '/chain/info' });
    expect(info.json()).toMatchObject({ network: 'stellar:local' });
    expect((await app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ ok: true });
    expect((await app.inject({ method: 'GET', url: '/chain/channels/7' })).json()).toMatchObject({
      error: 'NOT_FOUND',
      source: 'ledger',
    });
    await app.close();
    await ledger.close();
    dir.remove();
  });
});
