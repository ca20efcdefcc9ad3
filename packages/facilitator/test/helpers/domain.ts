// The facilitator's domain without HTTP: the adapters the configuration names (SQLite in a temporary
// data directory, the in-process local ledger) and the domain built on them, as the composition
// root builds them — for tests of the verifier, payments and streams that run in milliseconds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { BATCH_SCHEME, channelTermsOf, randomKeypair, signLedgerTx } from '@svc/core';
import type { BatchRequirements, Keypair, PaymentRequirements, Receipt } from '@svc/core';
import type { LocalLedger } from '@svc/ledger';
import type { ChannelSigner } from '@svc/sdk';
import { openAdapters } from '../../src/composition/adapters.js';
import type { Adapters } from '../../src/composition/adapters.js';
import { createDomain } from '../../src/composition/domain.js';
import type { Domain } from '../../src/composition/domain.js';
import { loadConfig } from '../../src/config.js';
import type { BatchInput } from '../../src/domain/batch-types.js';
import { SYSTEM_CLOCK } from '../../src/domain/clock.js';
import { startLatestLedger } from '../../src/domain/ledger-connection.js';
import { createLogger } from '../../src/logger.js';
import type { VerifyInput } from '../../src/domain/verify-types.js';
import type { Services } from '../../src/services.js';
import { channelSigner } from './open-channel.js';

export interface DomainFixture {
  services: Services;
  domain: Domain;
  ledger: LocalLedger;
  /** The channel terms of a seller paid `price` per request. */
  terms(payTo: string, price?: bigint): PaymentRequirements;
  /** A funded payer's channel to `payee` (bound to the facilitator as receiver authorizer when `bound`). */
  channel(o: {
    payee: string;
    deposit: bigint;
    bound?: boolean;
  }): Promise<{ payer: Keypair; voucherKey: Keypair; signer: ChannelSigner }>;
  close(): Promise<void>;
}

export async function openDomain(env: Record<string, string> = {}): Promise<DomainFixture> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-domain-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', LEDGER_SECONDS: '1', DEMO: 'false', ...env });
  const adapters: Adapters = await openAdapters(config, createLogger('warn'));
  const ledger = adapters.localLedger!;
  const domain = await createDomain(adapters, { clock: SYSTEM_CLOCK, signReceiptsInline: true });
  const { services } = domain;
  await startLatestLedger(services.latestLedger, adapters.store, Date.now());
  await domain.reconciler.prepare();
  const info = services.ledgerInfo;

  async function submit(source: Keypair, op: string, args: Record<string, unknown>) {
    const seq = (await ledger.getAccount(source.address)).seq + 1;
    const res = await ledger.submit(signLedgerTx(source, info.passphrase, { source: source.address, seq, op, args }));
    if (res.status !== 'SUCCESS') throw new Error(`${op} failed: ${res.message ?? res.code}`);
    return res;
  }

  return {
    services,
    domain,
    ledger,
    terms: (payTo, price = 5000n) => ({
      scheme: 'channel',
      network: info.network,
      asset: info.contracts.asset,
      payTo,
      amount: price.toString(),
      unit: 'request',
      maxTimeoutSeconds: 60,
      extra: {
        channelContract: info.contracts.channel,
        minDeposit: (price * 1000n).toString(),
        facilitator: 'http://127.0.0.1:1',
        areFeesSponsored: true,
      },
    }),
    async channel({ payee, deposit, bound }) {
      const payer = randomKeypair();
      const voucherKey = randomKeypair();
      await ledger.faucet(payer.address);
      const authorizer = bound ? services.keys.address : undefined;
      const opened = await submit(payer, 'channel.open', {
        payee,
        deposit: deposit.toString(),
        voucherKey: voucherKey.publicKeyHex,
        expiryLedger: (await ledger.latestLedger()) + 17_280,
        ...(authorizer ? { receiverAuthorizer: authorizer } : {}),
      });
      const channelId = BigInt((opened.result as { channelId: string }).channelId);
      await domain.watcher.tick();
      const signer = channelSigner(info, { channelId, deposit, voucherKey, payee, receiverAuthorizer: authorizer });
      return { payer, voucherKey, signer };
    },
    async close() {
      await adapters.store.close();
      await adapters.bus.close();
      await adapters.limiters.close();
      await ledger.close();
      adapters.dataDirLock?.release();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The domain of the calling describe block: opened before its tests and closed after them, so a
 * suite pays for one fixture. It is open only while a test runs: read it there.
 */
export function domainPerSuite(env: Record<string, string> = {}): DomainFixture {
  let open: DomainFixture | null = null;
  beforeAll(async () => {
    open = await openDomain(env);
  });
  afterAll(async () => {
    await open?.close();
  });
  const now = (): DomainFixture => {
    if (!open) throw new Error('the domain opens before the suite’s first test: use it inside a test');
    return open;
  };
  return {
    get services() {
      return now().services;
    },
    get domain() {
      return now().domain;
    },
    get ledger() {
      return now().ledger;
    },
    terms: (payTo, price) => now().terms(payTo, price),
    channel: (o) => now().channel(o),
    close: () => now().close(),
  };
}

/** The request a payment pays for, as a route reads it; by default a GET of one resource, no body, no key. */
export interface PaidRequest {
  resource?: string;
  method?: string;
  requestHash?: string | null;
  idempotencyKey?: string | null;
  paymentId?: string;
  /** The voucher's signature, when it is not the channel's signer's (another key's, or over a deposit). */
  signature?: string;
}

/** A `channel` voucher for `cumulative` on `requirements`, as /verify and /settle read it. */
export function voucherInput(
  signer: ChannelSigner,
  requirements: PaymentRequirements,
  cumulative: bigint,
  o: PaidRequest = {},
): VerifyInput {
  return { payment: paymentOf(signer, cumulative, o), requirements, ...requestOf(o) };
}

/**
 * A `batch-settlement` voucher whose ceiling is `ceiling`, charging at most `amount`: the buyer
 * echoes the terms it chose (their amount is the price), as decodeBatchPayment reads a payload.
 */
export function batchInput(
  signer: ChannelSigner,
  requirements: BatchRequirements,
  ceiling: bigint,
  amount: bigint,
  o: PaidRequest = {},
): BatchInput {
  return {
    payment: { ...paymentOf(signer, ceiling, o), scheme: BATCH_SCHEME, kind: 'voucher', accepted: requirements },
    requirements,
    terms: channelTermsOf(requirements),
    amount,
    ...requestOf(o),
  };
}

function paymentOf(signer: ChannelSigner, cumulative: bigint, o: PaidRequest) {
  const signature = o.signature ?? signer.sign(cumulative).signature;
  return { x402Version: 2 as const, network: signer.network, channelId: signer.channelId, cumulative, signature };
}

function requestOf(o: PaidRequest) {
  return {
    resource: o.resource ?? 'http://seller.test/book',
    method: o.method ?? 'GET',
    requestHash: o.requestHash ?? null,
    idempotencyKey: o.idempotencyKey ?? null,
    ...(o.paymentId === undefined ? {} : { paymentId: o.paymentId }),
  };
}

/**
 * The same payment for two requests at once (each its own resource), where one channel can take
 * only one of them: checks that exactly one won, and returns the other's answer.
 */
export async function loserOfTwo<T extends { ok: boolean }>(pay: (request: PaidRequest) => Promise<T>): Promise<T> {
  const both = await Promise.all(['http://seller.test/a', 'http://seller.test/b'].map((resource) => pay({ resource })));
  expect(both.filter((answer) => answer.ok)).toHaveLength(1);
  return both.find((answer) => !answer.ok)!;
}

/** The data of a channel's `voucher.accepted` events, oldest first. */
export async function acceptedEventsOf(d: DomainFixture, channelId: bigint): Promise<Record<string, unknown>[]> {
  const events = await d.services.store.events({ channelId, types: ['voucher.accepted'], limit: 10 });
  return events.map((event) => event.data);
}

/** The data of a receipt's `voucher.accepted` event (accepted-receipt.ts): the receipt's figures, and what a scheme adds. */
export function acceptedEventOf(receipt: Receipt, more: Record<string, unknown> = {}): Record<string, unknown> {
  const { channelId, payer, payee, cumulative, unit, resource, amount: delta, id: receiptId } = receipt;
  return {
    channelId,
    payer,
    payee,
    cumulative,
    delta,
    unit,
    resource,
    latencyMs: expect.any(Number),
    receiptId,
    ...more,
  };
}
