// x402 `batch-settlement` end to end, over real HTTP against a real svc facilitator: an @x402/fetch
// buyer with BatchSettlementStellarScheme (client) pays the svc demo seller (@svc/meter) and an
// @x402/express seller with BatchSettlementStellarScheme (server). Each answer is charged once, at
// most its price (less with a settlement override, and the next ceiling follows the charged total);
// a buyer whose books are behind is corrected by one 402; a seller that lies about the channel
// moves no books; a handler that fails is not charged and frees the channel at once.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BATCH_SCHEME,
  decodeJsonHeader,
  encodeJsonHeader,
  randomKeypair,
  toHex,
  verifyReceipt,
  voucherContext,
} from '@svc/core';
import type { BatchVoucher, PaymentRequired, Receipt } from '@svc/core';
import { Wallet } from '@svc/sdk';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementStellarScheme } from '../src/batch-settlement/client.js';
import { PRICE, startBatchSeller } from './helpers/batch-seller.js';
import type { BatchSeller } from './helpers/batch-seller.js';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Harness } from '../../facilitator/test/helpers/harness.js';

const MISMATCH = 'invalid_batch_settlement_stellar_cumulative_amount_mismatch';

/** One request the buyer's fetch made: the voucher it carried, and the answer's status and error. */
interface Exchange {
  url: string;
  voucher: BatchVoucher | null;
  /** The PAYMENT-SIGNATURE sent, as sent. */
  header: string | null;
  status: number;
  error: string | undefined;
}

interface SettleAnswer {
  success: boolean;
  errorReason?: string;
  extra: {
    chargedAmount: string;
    channelState: { channelId: string; chargedCumulativeAmount: string };
    receipt: { receipt: Receipt };
  };
}

function decoded<T>(header: string | null): T {
  const value = decodeJsonHeader(header ?? '', 64 * 1024);
  if (!value.ok) throw new Error('not a readable x402 header');
  return value.value as T;
}

describe('batch-settlement with @x402/fetch and @x402/express on an svc facilitator', () => {
  let h: Harness;
  let seller: BatchSeller;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-batch-'));

  beforeAll(async () => {
    h = await startHarness();
    seller = await startBatchSeller(new HTTPFacilitatorClient({ url: h.url }), randomKeypair().address);
  });
  afterAll(async () => {
    await seller?.close();
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A buyer written with @x402/fetch and the batch client scheme only, its wallet in `file` (or in memory). */
  async function buyer(file?: string) {
    const wallet = Wallet.open(file ? { file } : {});
    const logs: string[] = [];
    const scheme = await BatchSettlementStellarScheme.fromFacilitator(h.url, wallet, { log: (l) => logs.push(l) });
    const exchanges: Exchange[] = [];
    const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      const sent = req.headers.get('payment-signature');
      const res = await fetch(req);
      const required = res.headers.get('payment-required');
      exchanges.push({
        url: req.url,
        voucher: sent ? decoded<{ payload: { voucher: BatchVoucher } }>(sent).payload.voucher : null,
        header: sent,
        status: res.status,
        error: required ? decoded<PaymentRequired>(required).error : undefined,
      });
      return res;
    }) as typeof fetch;
    const pay = wrapFetchWithPayment(recording, new x402Client().register('stellar:*', scheme));
    const ceilings = () => exchanges.flatMap((e) => (e.voucher ? [BigInt(e.voucher.maxClaimableAmount)] : []));
    return { wallet, pay, exchanges, ceilings, logs };
  }

  async function view(channelId: bigint) {
    const res = await fetch(`${h.url}/channels/${channelId}`);
    expect(res.status).toBe(200);
    return (await res.json()) as { charged: string; lastAccepted: string; payee: string };
  }

  it('(a) pays the svc demo seller (@svc/meter) several times, charged once per answer', async () => {
    const b = await buyer();
    const signers = [h.f.address];
    for (let i = 1n; i <= 4n; i++) {
      const res = await b.pay(`${h.url}/demo/book`);
      expect(res.status, `payment ${i}`).toBe(200);
      expect(((await res.json()) as { title: string }).title).toBe('The Cumulative Voucher');
      const answer = decoded<SettleAnswer>(res.headers.get('payment-response'));
      expect(answer).toMatchObject({
        success: true,
        extra: { chargedAmount: '5000', channelState: { chargedCumulativeAmount: (PRICE * i).toString() } },
      });
      expect(verifyReceipt(answer.extra.receipt.receipt, signers)).toEqual({ ok: true });
    }
    expect(b.wallet.channels).toHaveLength(1);
    const channel = b.wallet.channels[0]!;
    expect(channel.receiverAuthorizer).toBe(h.f.address);
    expect(channel.cumulative).toBe(20_000n);
    // One voucher per answer, each the charged total so far plus the price; no refusal, no retry.
    expect(b.ceilings()).toEqual([5000n, 10_000n, 15_000n, 20_000n]);
    expect(b.exchanges.filter((e) => e.voucher && e.status !== 200)).toEqual([]);
    expect(await view(channel.channelId)).toMatchObject({ charged: '20000', lastAccepted: '20000' });
  });

  it('(f) payment-identifier: the buyer names each payment at an svc meter; the same payment sent again is answered the same and charged once', async () => {
    const b = await buyer();
    const url = `${h.url}/demo/book`;
    const res = await b.pay(url);
    expect(res.status).toBe(200);
    const paid = b.exchanges.at(-1)!;
    const sent = decoded<{ extensions: Record<string, { info: { required: boolean; id: string } }> }>(paid.header);
    expect(sent.extensions['payment-identifier']?.info).toEqual({
      required: false,
      id: expect.stringMatching(/^pay_[0-9a-f]{32}$/),
    });
    const channelId = b.wallet.channels[0]!.channelId;
    const before = await view(channelId);
    expect(before).toMatchObject({ charged: PRICE.toString() });
    // The answer was lost: the buyer sends the very same payment again.
    const again = await fetch(url, { headers: { 'payment-signature': paid.header! } });
    expect(again.status).toBe(200);
    expect(decoded<SettleAnswer>(again.headers.get('payment-response')).extra.receipt).toEqual(
      decoded<SettleAnswer>(res.headers.get('payment-response')).extra.receipt,
    );
    expect(await view(channelId)).toEqual(before);
    // The buyer's next payment is the next ceiling, under a new id.
    expect((await b.pay(url)).status).toBe(200);
    expect(b.ceilings()).toEqual([PRICE, 2n * PRICE]);
  });

  it('(b) pays an @x402/express seller; a settlement override charges less, and the next ceiling follows the charged total', async () => {
    const unpaid = await fetch(`${seller.url}/weather`);
    expect(unpaid.status).toBe(402);
    const info = await h.ledger.info();
    expect(decoded<PaymentRequired>(unpaid.headers.get('payment-required')).accepts).toEqual([
      {
        scheme: 'batch-settlement',
        network: 'stellar:local',
        asset: info.contracts.asset,
        payTo: seller.payTo,
        amount: '5000',
        maxTimeoutSeconds: 300,
        extra: {
          receiverAuthorizer: h.f.address,
          channelContract: info.contracts.channel,
          facilitator: h.url,
          minDeposit: '5000000',
          areFeesSponsored: true,
          unit: 'request',
          unitPrice: '5000',
        },
      },
    ]);

    const b = await buyer();
    const steps = [
      ['weather', '5000', 5000n],
      ['partial', '1200', 6200n],
      ['partial', '1200', 7400n],
      ['weather', '5000', 12_400n],
    ] as const;
    for (const [route, charge, total] of steps) {
      const res = await b.pay(`${seller.url}/${route}`);
      expect(res.status, route).toBe(200);
      const answer = decoded<SettleAnswer>(res.headers.get('payment-response'));
      expect(answer).toMatchObject({
        success: true,
        extra: { chargedAmount: charge, channelState: { chargedCumulativeAmount: total.toString() } },
      });
      // The stock facilitator client keeps `extra`: the svc receipt reaches the buyer.
      expect(answer.extra.receipt.receipt).toMatchObject({ amount: charge, cumulative: total.toString() });
      expect(verifyReceipt(answer.extra.receipt.receipt, [h.f.address])).toEqual({ ok: true });
      expect(b.wallet.channels[0]!.cumulative).toBe(total);
    }
    // Each ceiling is what was charged before plus the price, not what was signed before.
    expect(b.ceilings()).toEqual([5000n, 10_000n, 11_200n, 12_400n]);
    expect([seller.served('weather'), seller.served('partial')]).toEqual([2, 2]);
    const channel = b.wallet.channels[0]!;
    expect(await view(channel.channelId)).toMatchObject({
      payee: seller.payTo,
      charged: '12400',
      lastAccepted: '12400',
    });
  });

  it.each(['meter', 'express'] as const)(
    '(c) a buyer whose wallet file was put back to an older copy is corrected by one 402 and charged exactly once per answer (%s seller)',
    async (which) => {
      const url = which === 'meter' ? `${h.url}/demo/book` : `${seller.url}/weather`;
      const servedBefore = seller.served('weather');
      const file = path.join(dir, `${which}-wallet.json`);
      const first = await buyer(file);
      expect((await first.pay(url)).status).toBe(200);
      fs.copyFileSync(file, `${file}.old`);
      for (let i = 0; i < 2; i++) expect((await first.pay(url)).status).toBe(200);
      fs.copyFileSync(`${file}.old`, file);

      const restored = await buyer(file);
      const channel = restored.wallet.channels[0]!;
      expect(channel.channelId).toBe(first.wallet.channels[0]!.channelId);
      expect(channel.cumulative).toBe(0n); // the copy was written before the first answer
      for (let i = 0; i < 3; i++) expect((await restored.pay(url)).status).toBe(200);

      // One corrective 402, then every payment is served at the first attempt.
      const refused = restored.exchanges.filter((e) => e.voucher !== null && e.status !== 200);
      expect(refused.map((e) => [e.status, e.error])).toEqual([[402, MISMATCH]]);
      expect(restored.ceilings()).toEqual([5000n, 20_000n, 25_000n, 30_000n]);
      const answers = [...first.exchanges, ...restored.exchanges].filter((e) => e.status === 200).length;
      expect(answers).toBe(6);
      if (which === 'express') expect(seller.served('weather') - servedBefore).toBe(6);
      expect(await view(channel.channelId)).toMatchObject({ charged: (PRICE * 6n).toString() });
      expect(channel.cumulative).toBe(PRICE * 6n);
    },
  );

  it('(d) a lying seller’s account of the channel is refused, and the buyer signs nothing past what it owes', async () => {
    let terms: PaymentRequired | null = null;
    let lie: (voucher: BatchVoucher) => { status: number; headers: Record<string, string> } = () => ({
      status: 500,
      headers: {},
    });
    const corrective = (voucher: BatchVoucher, charged: string, voucherState: object) => {
      const accepts = terms!.accepts.map((a) =>
        a.scheme === BATCH_SCHEME
          ? {
              ...a,
              extra: {
                ...a.extra,
                channelState: {
                  channelId: voucher.channelId,
                  balance: '5000000',
                  totalClaimed: '0',
                  chargedCumulativeAmount: charged,
                  refundNonce: '0',
                  expiryLedger: 1_000_000,
                },
                voucherState,
              },
            }
          : a,
      );
      return {
        status: 402,
        headers: { 'payment-required': encodeJsonHeader({ ...terms!, error: MISMATCH, accepts }) },
      };
    };
    // The demo seller's terms, then whatever `lie` answers to a payment.
    const liar = http.createServer((req, res) => {
      const paid = req.headers['payment-signature'];
      if (typeof paid !== 'string') {
        void fetch(`${h.url}/demo/book`).then((real) => {
          terms = decoded<PaymentRequired>(real.headers.get('payment-required'));
          res.writeHead(402, { 'payment-required': real.headers.get('payment-required')! }).end('{}');
        });
        return;
      }
      const answer = lie(decoded<{ payload: { voucher: BatchVoucher } }>(paid).payload.voucher);
      res.writeHead(answer.status, answer.headers).end('{}');
    });
    liar.listen(0, '127.0.0.1');
    await new Promise((r) => liar.once('listening', r));
    const liarUrl = `http://127.0.0.1:${(liar.address() as AddressInfo).port}/book`;
    try {
      const b = await buyer();
      expect((await b.pay(`${h.url}/demo/book`)).status).toBe(200);
      const channel = b.wallet.channels[0]!;
      const info = await h.ledger.info();

      // A voucher state signed by a key that is not the channel's, claiming 40000 charged.
      lie = (v) => {
        const forged = voucherContext(info.passphrase, info.contracts.channel).sign(
          randomKeypair(),
          BigInt(v.channelId),
          40_000n,
        );
        return corrective(v, '40000', { signedMaxClaimable: '40000', signature: toHex(forged) });
      };
      expect((await b.pay(liarUrl)).status).toBe(402);
      // The buyer's own voucher, just sent, with more charged than it allows.
      lie = (v) =>
        corrective(v, (BigInt(v.maxClaimableAmount) + 1000n).toString(), {
          signedMaxClaimable: v.maxClaimableAmount,
          signature: v.signature,
        });
      expect((await b.pay(liarUrl)).status).toBe(402);
      // A state for another channel, proved by a voucher of that channel.
      lie = (v) =>
        corrective({ ...v, channelId: '12345' }, '5000', { signedMaxClaimable: '5000', signature: v.signature });
      expect((await b.pay(liarUrl)).status).toBe(402);

      // No retry on any of them: the unpaid request and the paid one, each time.
      expect(b.exchanges.filter((e) => e.url === liarUrl).map((e) => e.status)).toEqual([402, 402, 402, 402, 402, 402]);
      expect(b.logs).toHaveLength(3);
      expect(b.logs[0]).toMatch(/not signed by this channel's voucher key/);
      expect(b.logs[1]).toMatch(/above its voucher/);
      expect(b.logs[2]).toMatch(/for channel 12345/);
      expect(channel.cumulative).toBe(5000n);
      // Every voucher the liar got was for what the buyer owes plus one price, never more.
      expect(b.ceilings()).toEqual([5000n, 10_000n, 10_000n, 10_000n]);

      // The real seller: the next voucher is the real charged total plus the price.
      expect((await b.pay(`${h.url}/demo/book`)).status).toBe(200);
      expect(channel.cumulative).toBe(10_000n);
      expect(channel.signed).toBe(10_000n);
      expect(await view(channel.channelId)).toMatchObject({ charged: '10000', lastAccepted: '10000' });

      // A paid answer that does not add up (charged above the price): not adopted, and the
      // client signs no more on the channel.
      lie = (v) => ({
        status: 200,
        headers: {
          'payment-response': encodeJsonHeader({
            success: true,
            transaction: '',
            network: 'stellar:local',
            extra: {
              chargedAmount: '9000',
              channelState: {
                channelId: v.channelId,
                balance: '5000000',
                totalClaimed: '0',
                chargedCumulativeAmount: '19000',
                refundNonce: '0',
                expiryLedger: 1_000_000,
              },
            },
          }),
        },
      });
      expect((await b.pay(liarUrl)).status).toBe(200);
      expect(b.logs.at(-1)).toMatch(/above the price of 5000; this client signs no more on it/);
      expect(channel.cumulative).toBe(10_000n);
      const sent = b.ceilings().length;
      await expect(b.pay(`${h.url}/demo/book`)).rejects.toThrow(/not used any more by this client/);
      expect(b.ceilings()).toHaveLength(sent);
      expect(await view(channel.channelId)).toMatchObject({ charged: '10000' });
    } finally {
      await new Promise((r) => liar.close(r));
    }
  });

  it('(e) a handler that fails is not charged and frees the channel for the next request at once; so does an override above the price', async () => {
    const b = await buyer();
    expect((await b.pay(`${seller.url}/weather`)).status).toBe(200);
    const channel = b.wallet.channels[0]!;

    const failed = await b.pay(`${seller.url}/fail`);
    expect(failed.status).toBe(500);
    expect(failed.headers.get('payment-response')).toBeNull();
    expect(await view(channel.channelId)).toMatchObject({ charged: '5000' });
    const next = await b.pay(`${seller.url}/weather`);
    expect(next.status).toBe(200);
    expect(decoded<SettleAnswer>(next.headers.get('payment-response')).extra.chargedAmount).toBe('5000');

    const greedy = await b.pay(`${seller.url}/greedy`);
    expect(greedy.status).toBe(402);
    expect(decoded<SettleAnswer>(greedy.headers.get('payment-response'))).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_charge_exceeds_signed_cumulative',
    });
    expect(await view(channel.channelId)).toMatchObject({ charged: '10000' });
    expect((await b.pay(`${seller.url}/weather`)).status).toBe(200);

    // The failed and refused requests' vouchers were for the same ceiling as the next one: nothing was charged for them.
    expect(b.ceilings()).toEqual([5000n, 10_000n, 10_000n, 15_000n, 15_000n]);
    expect(b.exchanges.filter((e) => e.voucher).map((e) => e.status)).toEqual([200, 500, 200, 402, 200]);
    expect([seller.served('fail'), seller.served('greedy')]).toEqual([1, 1]);
    expect(channel.cumulative).toBe(15_000n);
    expect(await view(channel.channelId)).toMatchObject({ charged: '15000' });
  });

  it('(h) a fresh wallet’s first payment opens the channel by deposit; an exhausted one is topped up the same way', async () => {
    // Terms whose minimum deposit is two prices: the third request finds the channel exhausted.
    const small = await startBatchSeller(new HTTPFacilitatorClient({ url: h.url }), randomKeypair().address, {
      minDepositUnits: 2n,
    });
    try {
      const wallet = Wallet.open();
      const scheme = await BatchSettlementStellarScheme.fromFacilitator(h.url, wallet);
      const sent: string[] = [];
      const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
        const req = new Request(input, init);
        const header = req.headers.get('payment-signature');
        if (header) sent.push(decoded<{ payload: { type: string } }>(header).payload.type);
        return fetch(req);
      }) as typeof fetch;
      const pay = wrapFetchWithPayment(recording, new x402Client().register('stellar:*', scheme));
      const answers: (SettleAnswer & { transaction: string; amount: string })[] = [];
      for (let i = 1n; i <= 3n; i++) {
        const res = await pay(`${small.url}/weather`);
        expect(res.status, `payment ${i}`).toBe(200);
        answers.push(decoded(res.headers.get('payment-response')));
      }
      expect(sent).toEqual(['deposit', 'voucher', 'deposit']);
      expect(wallet.channels).toHaveLength(1);
      const channel = wallet.channels[0]!;
      // The first answer is the deposit response: the opening, and what it deposited.
      expect(answers[0]).toMatchObject({ success: true, amount: (PRICE * 2n).toString() });
      expect(answers[0]!.transaction).toMatch(/^[0-9a-f]{64}$/);
      expect(answers[1]).toMatchObject({ transaction: '', amount: '' });
      // The third carried the top-up.
      expect(answers[2]).toMatchObject({ success: true, amount: (PRICE * 2n).toString() });
      expect(answers[2]!.transaction).not.toBe(answers[0]!.transaction);
      expect(answers.map((a) => a.extra.channelState.chargedCumulativeAmount)).toEqual(['5000', '10000', '15000']);
      expect(await h.ledger.channel(channel.channelId)).toMatchObject({
        payer: wallet.buyer.address,
        deposit: (PRICE * 4n).toString(),
        receiverAuthorizer: h.f.address,
      });
      expect(channel.pendingDeposit).toBeNull();
      expect(small.served('weather')).toBe(3);
    } finally {
      await small.close();
    }
  });
});
