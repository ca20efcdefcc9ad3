// A `batch-settlement` deposit payload over real HTTP: a buyer with funds and no channel pays its
// first request with one header — its signed opening of the channel and the first voucher — and
// the facilitator submits the opening (its fees), then serves the request with the deposit
// response (`transaction` = the opening, `amount` = the deposit). A resent deposit opens nothing
// twice; a transaction that is not the payer's opening for this seller is refused with a code and
// nothing is submitted; an exhausted channel is topped up the same way; sponsored deposits are
// limited per payer (429 + Retry-After).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SCHEME, decodeJsonHeader, encodeJsonHeader, randomKeypair, signLedgerTx } from '@svc/core';
import type { BatchRequirements, Keypair, PaymentRequired, SignedLedgerTx } from '@svc/core';
import { ChannelSigner } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const PRICE = 5000n;

interface Fresh {
  payer: Keypair;
  voucherKey: Keypair;
  signer: ChannelSigner;
  tx: SignedLedgerTx;
  hash: string;
}

describe('batch-settlement deposit payloads', () => {
  let h: Harness;
  let terms: BatchRequirements;
  let deposit: bigint;

  beforeAll(async () => {
    // Two sponsored deposits per payer, four per client address: the tests below submit four, in order.
    h = await startHarness({
      CLAIM_INTERVAL_SECONDS: '3600',
      DEPOSIT_LIMIT_PER_PAYER_PER_HOUR: '2',
      DEPOSIT_LIMIT_PER_IP_PER_HOUR: '4',
    });
    const res = await fetch(`${h.url}/demo/book`);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    const book = (decoded.ok ? decoded.value : null) as PaymentRequired;
    terms = book.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
    deposit = BigInt(terms.extra.minDeposit);
  });
  afterAll(async () => {
    await h?.close();
  });

  /** A funded buyer with no channel, its opening signed (not sent) and a signer for the channel it derives. */
  async function fresh(
    o: { payTo?: string; deposit?: bigint; authorizer?: string | null; funded?: boolean } = {},
  ): Promise<Fresh> {
    const payer = randomKeypair();
    const voucherKey = randomKeypair();
    if (o.funded !== false) await h.ledger.faucet(payer.address);
    const info = await h.ledger.info();
    const authorizer = o.authorizer === undefined ? terms.extra.receiverAuthorizer : o.authorizer;
    const amount = o.deposit ?? deposit;
    const opening = await h.ledger.signOpenChannel({
      payer,
      payee: o.payTo ?? terms.payTo,
      deposit: amount,
      voucherKey,
      ...(authorizer === null ? {} : { receiverAuthorizer: authorizer }),
    });
    const signer = new ChannelSigner({
      channelId: opening.channelId,
      deposit: amount,
      voucherKey,
      networkPassphrase: info.passphrase,
      channelContract: info.contracts.channel,
      network: info.network,
      payee: o.payTo ?? terms.payTo,
      asset: info.contracts.asset,
      receiverAuthorizer: terms.extra.receiverAuthorizer,
    });
    return { payer, voucherKey, signer, tx: opening.tx, hash: opening.hash };
  }

  function depositPayload(signer: ChannelSigner, ceiling: bigint, tx: SignedLedgerTx | string, amount: bigint) {
    const v = signer.sign(ceiling);
    return {
      type: 'deposit',
      deposit: { amount: amount.toString(), transaction: tx },
      voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
    };
  }

  function header(payload: unknown, accepted: BatchRequirements = terms): string {
    return encodeJsonHeader({ x402Version: 2, accepted, payload });
  }

  async function facilitator(route: '/verify' | '/settle', payload: unknown, requirements = terms) {
    const res = await fetch(`${h.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: requirements, payload, resource: { url: `${h.url}/r` } },
        paymentRequirements: requirements,
        method: 'GET',
      }),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as Record<string, unknown>,
    };
  }

  function answerOf(res: Response): Record<string, unknown> & { extra: Record<string, unknown> } {
    const decoded = decodeJsonHeader(res.headers.get('payment-response')!);
    return (decoded.ok ? decoded.value : null) as Record<string, unknown> & { extra: Record<string, unknown> };
  }

  it('a payer whose balance does not cover the deposit is refused insufficient_balance before anything is sent', async () => {
    const b = await fresh({ funded: false });
    const res = await facilitator('/settle', depositPayload(b.signer, PRICE, b.tx, deposit));
    expect(res.body).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_insufficient_balance',
    });
    expect(String(res.body['errorMessage'])).toMatch(/less than the deposit of 5000000: fund it and retry/);
    expect((await fetch(`${h.url}/ledger/tx/${b.hash}`)).status).toBe(404);
    expect(await h.ledger.channel(b.signer.channelId)).toBeNull();
  });

  it('a fresh funded buyer’s first request is served with a deposit response', async () => {
    const b = await fresh();
    expect(await h.ledger.channel(b.signer.channelId)).toBeNull();
    const before = await h.ledger.balance(b.payer.address);
    const res = await fetch(`${h.url}/demo/book`, {
      headers: { 'payment-signature': header(depositPayload(b.signer, PRICE, b.tx, deposit)) },
    });
    expect(res.status).toBe(200);
    const answer = answerOf(res);
    expect(answer).toMatchObject({
      success: true,
      transaction: b.hash,
      amount: deposit.toString(),
      payer: b.payer.address,
      extra: {
        chargedAmount: PRICE.toString(),
        channelState: {
          channelId: b.signer.channelId.toString(),
          balance: deposit.toString(),
          totalClaimed: '0',
          chargedCumulativeAmount: PRICE.toString(),
        },
      },
    });
    // The opening is the payer's own, on the ledger, bound to the facilitator; the facilitator paid its fees.
    expect(await h.ledger.channel(b.signer.channelId)).toMatchObject({
      payer: b.payer.address,
      payee: terms.payTo,
      deposit: deposit.toString(),
      receiverAuthorizer: h.f.address,
    });
    expect(await h.ledger.balance(b.payer.address)).toBe(before - deposit);
    // The next request is a plain voucher on the channel the deposit opened.
    b.signer.confirm(PRICE);
    const v = b.signer.sign(PRICE * 2n);
    const next = await fetch(`${h.url}/demo/book`, {
      headers: {
        'payment-signature': header({
          type: 'voucher',
          voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
        }),
      },
    });
    expect(next.status).toBe(200);
    expect(answerOf(next)).toMatchObject({ transaction: '', amount: '', extra: { chargedAmount: PRICE.toString() } });
  });

  it('a resent deposit is not a second opening: /verify then /settle of one payload, and an opening signed again', async () => {
    const payTo = randomKeypair().address;
    const requirements = { ...terms, payTo };
    const b = await fresh({ payTo });
    const payload = depositPayload(b.signer, PRICE, b.tx, deposit);
    const before = await h.ledger.balance(b.payer.address);
    expect((await facilitator('/verify', payload, requirements)).body).toMatchObject({ isValid: true });
    // The same payload again (a retry): the opening is on the ledger already.
    expect((await facilitator('/verify', payload, requirements)).body).toMatchObject({ isValid: true });
    const settled = await facilitator('/settle', payload, requirements);
    expect(settled.body).toMatchObject({
      success: true,
      transaction: b.hash,
      amount: deposit.toString(),
      extra: { chargedAmount: PRICE.toString() },
    });
    // The same opening signed again under the next seq is recognised as the opening it is: not sent.
    const { source, op, args } = b.tx;
    const again = signLedgerTx(b.payer, (await h.ledger.info()).passphrase, { source, seq: b.tx.seq + 1, op, args });
    b.signer.confirm(PRICE);
    const second = await facilitator('/settle', depositPayload(b.signer, PRICE * 2n, again, deposit), requirements);
    // It deposited nothing: its answer is a voucher's.
    expect(second.body).toMatchObject({
      success: true,
      transaction: '',
      amount: '',
      extra: { chargedAmount: PRICE.toString() },
    });
    expect(await h.ledger.balance(b.payer.address)).toBe(before - deposit);
    expect((await h.ledger.account(b.payer.address)).seq).toBe(1);
    const view = (await (await fetch(`${h.url}/channels/${b.signer.channelId}`)).json()) as Record<string, string>;
    expect(view).toMatchObject({ deposit: deposit.toString(), charged: (PRICE * 2n).toString() });
  });

  it('refuses a transaction that is not the payer’s opening for this seller, and submits nothing', async () => {
    const cases: [string, () => Promise<unknown>, string][] = [
      [
        'another payee',
        async () => {
          const b = await fresh({ payTo: randomKeypair().address });
          return depositPayload(b.signer, PRICE, b.tx, deposit);
        },
        'receiver_mismatch',
      ],
      [
        'another contract call',
        async () => {
          const b = await fresh();
          const info = await h.ledger.info();
          const transfer = signLedgerTx(b.payer, info.passphrase, {
            source: b.payer.address,
            seq: 1,
            op: 'transfer',
            args: { to: terms.payTo, amount: deposit.toString() },
          });
          return depositPayload(b.signer, PRICE, transfer, deposit);
        },
        'deposit_payload',
      ],
      [
        'not signed by its source',
        async () => {
          const b = await fresh();
          // Another key's signature over the same transaction.
          const forged = signLedgerTx(randomKeypair(), (await h.ledger.info()).passphrase, b.tx);
          return depositPayload(b.signer, PRICE, forged, deposit);
        },
        'deposit_payload',
      ],
      [
        'not bound to the facilitator',
        async () => {
          const b = await fresh({ authorizer: null });
          return depositPayload(b.signer, PRICE, b.tx, deposit);
        },
        'receiver_authorizer_mismatch',
      ],
      [
        'below the minimum deposit',
        async () => {
          const b = await fresh({ deposit: deposit - 1n });
          return depositPayload(b.signer, PRICE, b.tx, deposit - 1n);
        },
        'deposit_payload',
      ],
      [
        'a Stellar envelope',
        async () => {
          const b = await fresh();
          return depositPayload(b.signer, PRICE, 'AAAAAgAAAAA=', deposit);
        },
        'deposit_payload',
      ],
    ];
    for (const [what, make, code] of cases) {
      const payload = (await make()) as { voucher: { channelId: string } };
      const res = await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': header(payload) } });
      expect(res.status, what).toBe(402);
      const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
      const required = (decoded.ok ? decoded.value : null) as PaymentRequired & { error?: string };
      expect(required.error, what).toBe(`invalid_batch_settlement_stellar_${code}`);
      expect(await h.ledger.channel(BigInt(payload.voucher.channelId)), what).toBeNull();
    }
  });

  it('tops up an exhausted channel with a deposit payload, then limits sponsored deposits per payer', async () => {
    const payTo = randomKeypair().address;
    const small = PRICE * 2n;
    const requirements: BatchRequirements = {
      ...terms,
      payTo,
      extra: { ...terms.extra, minDeposit: small.toString() },
    };
    const b = await fresh({ payTo, deposit: small });
    expect(
      (await facilitator('/settle', depositPayload(b.signer, PRICE, b.tx, small), requirements)).body,
    ).toMatchObject({
      success: true,
      amount: small.toString(),
    });
    b.signer.confirm(PRICE);
    const v = b.signer.sign(PRICE * 2n);
    const voucher = { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature };
    expect((await facilitator('/settle', { type: 'voucher', voucher }, requirements)).body).toMatchObject({
      success: true,
    });
    b.signer.confirm(PRICE * 2n);
    // Exhausted: a third voucher would pass the deposit.
    b.signer.setDeposit(small * 2n);
    const o = b.signer.sign(PRICE * 3n);
    const over = await facilitator(
      '/settle',
      {
        type: 'voucher',
        voucher: { channelId: o.channelId, maxClaimableAmount: o.cumulative, signature: o.signature },
      },
      requirements,
    );
    expect(over.body).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_cumulative_exceeds_balance',
    });

    const topUp = await h.ledger.signTopUp({ payer: b.payer, channelId: b.signer.channelId, amount: small });
    const topped = await facilitator('/settle', depositPayload(b.signer, PRICE * 3n, topUp.tx, small), requirements);
    expect(topped.body).toMatchObject({
      success: true,
      transaction: topUp.hash,
      amount: small.toString(),
      extra: {
        chargedAmount: PRICE.toString(),
        channelState: { balance: (small * 2n).toString(), chargedCumulativeAmount: (PRICE * 3n).toString() },
      },
    });
    expect((await h.ledger.channel(b.signer.channelId))?.deposit).toBe((small * 2n).toString());

    // The payer's third sponsored deposit within the hour (DEPOSIT_LIMIT_PER_PAYER_PER_HOUR = 2).
    b.signer.confirm(PRICE * 3n);
    const third = await h.ledger.signTopUp({ payer: b.payer, channelId: b.signer.channelId, amount: small });
    const limited = await facilitator('/settle', depositPayload(b.signer, PRICE * 4n, third.tx, small), requirements);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect(limited.body).toMatchObject({ error: 'RATE_LIMITED' });
    expect((await h.ledger.channel(b.signer.channelId))?.deposit).toBe((small * 2n).toString());
  });

  it('limits sponsored deposits per client address: the fifth submission of this address waits, and nothing is opened', async () => {
    const b = await fresh();
    const res = await fetch(`${h.url}/demo/book`, {
      headers: { 'payment-signature': header(depositPayload(b.signer, PRICE, b.tx, deposit)) },
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await h.ledger.channel(b.signer.channelId)).toBeNull();
  });
});
