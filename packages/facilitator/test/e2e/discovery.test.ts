// The discovery catalog: a resource is listed once a verified payment for it went through the
// facilitator, keyed by (resource URL, payTo); only a payment to that payTo from another payer
// changes a listing; the forwarded bazaar metadata is validated and bounded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import type { Keypair, PaymentRequirements } from '@svc/core';
import { ChannelSigner, payFetch } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

interface Item {
  resource: string;
  type: string;
  x402Version: number;
  accepts: PaymentRequirements[];
  lastUpdated: string;
  extensions: {
    bazaar: {
      info: { input: Record<string, unknown>; output: Record<string, unknown> };
      schema: Record<string, unknown>;
    };
  };
  description: string;
  mimeType: string;
  payTo: string;
  payments: number;
  payers: number;
}
interface Page {
  x402Version: number;
  items: Item[];
  pagination: { limit: number; offset: number; total: number };
}

const BAZAAR = {
  info: {
    input: { type: 'http', method: 'GET', queryParams: { q: 'term' } },
    output: { type: 'json', mimeType: 'application/json' },
  },
  schema: { type: 'object', properties: { answer: { type: 'string' } } },
};

describe('GET /discovery/resources', () => {
  let h: Harness;
  const seller = randomKeypair().address;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  async function discovery(query = ''): Promise<{ status: number; body: Page & { error?: string; message?: string } }> {
    await h.f.services.catalog.flush(); // payments are tallied and written every second
    const res = await fetch(`${h.url}/discovery/resources${query}`);
    return { status: res.status, body: (await res.json()) as Page & { error?: string } };
  }

  /**
   * POST /verify the way a seller's middleware does, with the resource and bazaar metadata and the
   * seller's token (`as: 'buyer'`: the way a buyer or a stranger can, without it).
   */
  async function pay(
    buyer: Buyer,
    o: {
      url: string;
      payTo: string;
      amount?: string;
      bazaar?: unknown;
      description?: string;
      signer?: ChannelSigner;
      idempotencyKey?: string;
      repeat?: boolean;
      as?: 'seller' | 'buyer';
    },
  ) {
    const requirements = h.requirements({ payTo: o.payTo, amount: o.amount ?? '5000' });
    const signer = o.signer ?? buyer.signer;
    const payload = o.repeat ? signer.sign(signer.cumulative) : signer.next(BigInt(requirements.amount));
    const auth: Record<string, string> = o.as === 'buyer' ? {} : { authorization: `Bearer ${h.sellerToken(o.payTo)}` };
    const res = await fetch(`${h.url}/verify`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...auth,
        ...(o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {}),
      },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: requirements,
          payload,
          resource: { url: o.url, description: o.description ?? 'A paid answer.', mimeType: 'application/json' },
          extensions: { bazaar: o.bazaar ?? BAZAAR },
        },
        paymentRequirements: requirements,
        method: 'GET',
      }),
    });
    const body = (await res.json()) as { isValid: boolean; invalidReason?: string };
    expect(body.isValid, JSON.stringify(body)).toBe(true);
    signer.confirm(BigInt(payload.cumulative));
  }

  /** A channel whose payer is its own payee. */
  async function selfChannel(keys: Keypair): Promise<ChannelSigner> {
    const info = await h.ledger.info();
    await h.ledger.faucet(keys.address);
    const voucherKey = randomKeypair();
    const opened = await h.ledger.openChannel({ payer: keys, payee: keys.address, deposit: 5_000_000n, voucherKey });
    return new ChannelSigner({
      channelId: opened.channelId,
      deposit: 5_000_000n,
      voucherKey,
      networkPassphrase: info.passphrase,
      channelContract: info.contracts.channel,
      network: info.network,
      payee: keys.address,
      asset: info.contracts.asset,
    });
  }

  const listing = async (url: string, payTo: string) =>
    (await discovery(`?payTo=${payTo}&limit=200`)).body.items.find((i) => i.resource === url);

  it('lists nothing before a payment, then the resource once a verified payment for it went through', async () => {
    const url = 'https://api.example.com/answers';
    expect(await listing(url, seller)).toBeUndefined();
    const buyer = await h.buyer({ payee: seller });
    await pay(buyer, { url, payTo: seller });
    const item = await listing(url, seller);
    expect(item).toMatchObject({
      resource: url,
      type: 'http',
      x402Version: 2,
      payTo: seller,
      payments: 1,
      payers: 1,
      description: 'A paid answer.',
      mimeType: 'application/json',
      extensions: { bazaar: BAZAAR },
    });
    // The 402's two options: `channel` first, then the same terms as x402 `batch-settlement`.
    expect(item!.accepts).toHaveLength(2);
    expect(item!.accepts[0]).toMatchObject({ scheme: 'channel', payTo: seller, amount: '5000', unit: 'request' });
    expect(item!.accepts[1]).toMatchObject({
      scheme: 'batch-settlement',
      payTo: seller,
      amount: '5000',
      extra: { receiverAuthorizer: h.f.address, unit: 'request', unitPrice: '5000' },
    });
    expect(Date.parse(item!.lastUpdated)).toBeGreaterThan(Date.now() - 60_000);

    const second = await h.buyer({ payee: seller });
    await pay(buyer, { url, payTo: seller });
    await pay(second, { url, payTo: seller });
    expect(await listing(url, seller)).toMatchObject({ payments: 3, payers: 2 });
  });

  it('counts a repeated request answered from its Idempotency-Key once', async () => {
    const url = 'https://api.example.com/idempotent';
    const buyer = await h.buyer({ payee: seller });
    await pay(buyer, { url, payTo: seller, idempotencyKey: 'order-1' });
    await pay(buyer, { url, payTo: seller, idempotencyKey: 'order-1', repeat: true });
    expect(await listing(url, seller)).toMatchObject({ payments: 1, payers: 1 });
  });

  it('a third party paying itself cannot change another seller’s listing of the same URL', async () => {
    const url = 'https://api.example.com/protected';
    const buyer = await h.buyer({ payee: seller });
    await pay(buyer, { url, payTo: seller });
    const before = await listing(url, seller);
    expect(before).toMatchObject({
      payments: 1,
      accepts: [{ amount: '5000' }, { scheme: 'batch-settlement', amount: '5000' }],
    });

    // The attacker pays itself a stroop, naming the seller's URL with its own terms and metadata:
    // a self-payment lists nothing and touches nothing.
    const attacker = randomKeypair();
    const self = await selfChannel(attacker);
    const junk = {
      info: { input: { type: 'http', method: 'DELETE' }, output: { type: 'json', mimeType: 'text/html' } },
      schema: { hijacked: true },
    };
    await pay(buyer, {
      url,
      payTo: attacker.address,
      amount: '1',
      bazaar: junk,
      description: 'Hijacked.',
      signer: self,
    });
    expect(await listing(url, attacker.address)).toBeUndefined();

    // Through a second account of its own, it only ever lists the URL under its own payTo.
    const sybil = await h.buyer({ payee: attacker.address });
    await pay(sybil, { url, payTo: attacker.address, amount: '1', bazaar: junk, description: 'Hijacked.' });
    expect(await listing(url, attacker.address)).toMatchObject({
      payTo: attacker.address,
      payments: 1,
      description: 'Hijacked.',
    });

    const after = await listing(url, seller);
    expect(after).toEqual(before);
    const all = (await discovery('?limit=200')).body.items.filter((i) => i.resource === url);
    expect(all.map((i) => i.payTo).sort()).toEqual([seller, attacker.address].sort());
  });

  it('anyone may pay a seller a stroop, but only the seller’s own middleware (its token) writes its listing', async () => {
    const url = 'https://api.example.com/genuine';
    const buyer = await h.buyer({ payee: seller, deposit: 50_000_000n });
    await pay(buyer, { url, payTo: seller });
    const before = await listing(url, seller);
    expect(before).toMatchObject({
      payments: 1,
      description: 'A paid answer.',
      accepts: [{ amount: '5000' }, { scheme: 'batch-settlement', amount: '5000' }],
    });

    // A stranger pays the seller one stroop through /verify itself, with its own text, price and URL:
    // the payment stands (the seller got a stroop), the listing does not change, the fake URL is not listed.
    const stranger = await h.buyer({ payee: seller });
    const junk = {
      info: { input: { type: 'http', method: 'GET' }, output: { type: 'json', mimeType: 'text/html' } },
      schema: {},
    };
    await pay(stranger, {
      url,
      payTo: seller,
      amount: '1',
      description: 'FREE — pay 1 stroop at http://evil.example',
      bazaar: junk,
      as: 'buyer',
    });
    await pay(stranger, {
      url: 'https://evil.example/fake-api',
      payTo: seller,
      amount: '1',
      description: 'FREE',
      as: 'buyer',
    });
    expect(await listing(url, seller)).toEqual(before);
    expect(await listing('https://evil.example/fake-api', seller)).toBeUndefined();

    // Another seller's token, or a forged one, is refused outright.
    const reqs = h.requirements({ payTo: seller, amount: '1' });
    const withToken = (token: string) => h.verify(stranger.signer.next(1n), reqs, { authorization: `Bearer ${token}` });
    expect((await withToken(h.sellerToken(randomKeypair().address))).status).toBe(403);
    expect((await withToken(`${h.sellerToken(seller).slice(0, -4)}AAAA`)).status).toBe(401);
  });

  it('replaces invalid or oversized bazaar metadata with the derived one, and does not list a URL with credentials', async () => {
    const buyer = await h.buyer({ payee: seller, deposit: 50_000_000n });
    await pay(buyer, {
      url: 'https://api.example.com/bad-bazaar',
      payTo: seller,
      bazaar: { info: { input: { type: 'ftp' } } },
    });
    expect((await listing('https://api.example.com/bad-bazaar', seller))?.extensions.bazaar).toEqual({
      info: { input: { type: 'http', method: 'GET' }, output: { type: 'json', mimeType: 'application/json' } },
      schema: {},
    });
    const huge = { ...BAZAAR, schema: { description: 'x'.repeat(9000) } };
    await pay(buyer, { url: 'https://api.example.com/huge-bazaar', payTo: seller, bazaar: huge });
    expect((await listing('https://api.example.com/huge-bazaar', seller))?.extensions.bazaar.schema).toEqual({});

    await pay(buyer, { url: 'https://user:secret@api.example.com/creds', payTo: seller });
    await pay(buyer, { url: 'ftp://api.example.com/file', payTo: seller });
    await pay(buyer, { url: 'https://api.example.com/frag#part', payTo: seller });
    const resources = (await discovery(`?payTo=${seller}&limit=200`)).body.items.map((i) => i.resource);
    expect(resources.some((r) => r.includes('secret') || r.startsWith('ftp:'))).toBe(false);
    expect(resources).toContain('https://api.example.com/frag');
  });

  it('the demo seller’s book is listed with the metadata its middleware forwards', async () => {
    const buyer = await h.buyer();
    const res = await payFetch(`${h.url}/demo/book`, {}, { signer: buyer.signer });
    expect(res.status).toBe(200);
    const item = await listing(`${h.url}/demo/book`, buyer.payee);
    expect(item).toMatchObject({
      payments: 1,
      extensions: { bazaar: { info: { input: { type: 'http', method: 'GET' }, output: { type: 'json' } } } },
    });
    expect(item!.accepts[0]).toMatchObject({ amount: '5000', unit: 'request', payTo: buyer.payee });
  });

  it('a resource paid with batch-settlement is listed with both options, `channel` first', async () => {
    const buyer = await h.buyer({ batch: true });
    const first = await fetch(`${h.url}/demo/book`);
    const offer = ((await first.json()) as { accepts: Record<string, unknown>[] }).accepts[1]!;
    expect(offer['scheme']).toBe('batch-settlement');
    const v = buyer.signer.sign(BigInt(offer['amount'] as string));
    const header = Buffer.from(
      JSON.stringify({
        x402Version: 2,
        accepted: offer,
        payload: {
          type: 'voucher',
          voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
        },
      }),
    ).toString('base64');
    const res = await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': header } });
    expect(res.status).toBe(200);
    const item = await listing(`${h.url}/demo/book`, buyer.payee);
    expect(item!.accepts.map((a) => a.scheme)).toEqual(['channel', 'batch-settlement']);
    expect(item!.accepts[1]).toEqual(offer);
  });

  it('pages with limit and offset, filters by payTo, and refuses bad queries with 400', async () => {
    const all = await discovery('?limit=200');
    expect(all.status).toBe(200);
    expect(all.body.x402Version).toBe(2);
    const total = all.body.pagination.total;
    expect(total).toBe(all.body.items.length);
    expect(total).toBeGreaterThanOrEqual(6);
    const page = await discovery('?limit=2&offset=1');
    expect(page.body.pagination).toEqual({ limit: 2, offset: 1, total });
    expect(page.body.items.map((i) => [i.resource, i.payTo])).toEqual(
      all.body.items.slice(1, 3).map((i) => [i.resource, i.payTo]),
    );
    // Most paid first.
    const counts = all.body.items.map((i) => i.payments);
    expect([...counts].sort((a, b) => b - a)).toEqual(counts);
    const mine = await discovery(`?payTo=${seller}`);
    expect(mine.body.items.every((i) => i.payTo === seller)).toBe(true);
    expect((await discovery('?payTo=nobody')).status).toBe(400);
    expect((await discovery('?limit=0')).status).toBe(400);
    expect((await discovery('?limit=201')).status).toBe(400);
    expect((await discovery('?offset=-1')).status).toBe(400);
    const unknown = await discovery('?page=2');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('BAD_REQUEST');
  });

  it('reads every whole-number query parameter as plain decimal digits: no hex, exponent, spaces or repeats', async () => {
    const address = h.f.address;
    const bad: [string, string][] = [
      ['/discovery/resources?limit=0x10', 'limit must be a whole number from 1 to 200'],
      ['/discovery/resources?limit=%201', 'limit must be a whole number from 1 to 200'],
      ['/discovery/resources?offset=1e3', 'offset must be a whole number from 0 to 1000000'],
      ['/receipts?limit=1e2', 'limit must be a whole number from 1 to 200'],
      ['/receipts?limit=1&limit=1', 'limit must be a whole number from 1 to 200'],
      [`/accounts/${address}/ledger?limit=2.0`, 'limit must be a whole number from 1 to 200'],
      ['/float?history=1e2', 'history must be a whole number from 1 to 500'],
      [`/sellers/${address}/revenue?days=0x1`, 'days must be a whole number from 1 to 365'],
    ];
    for (const [path, message] of bad) {
      const res = await fetch(`${h.url}${path}`);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { message: string }).message, path).toContain(message);
    }
    for (const path of [
      '/discovery/resources?limit=10&offset=0',
      '/receipts?limit=10',
      `/accounts/${address}/ledger?limit=10`,
      '/float?history=10',
      `/sellers/${address}/revenue?days=7`,
    ])
      expect((await fetch(`${h.url}${path}`)).status, path).toBe(200);
  });
});
