// A real facilitator for tests: random port, temporary data dir, the embedded ledger, SQLite
// (or PostgreSQL when DATABASE_URL is given), and helpers to fund buyers and open channels.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeJsonHeader, randomKeypair } from '@svc/core';
import type { ChannelPayload, Keypair, PaymentRequirements } from '@svc/core';
import type { Ledger } from '@svc/ledger';
import { LocalLedgerClient } from '@svc/sdk';
import type { ChannelSigner } from '@svc/sdk';
import { openChannel } from './open-channel.js';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';
import type { Facilitator } from '../../src/facilitator.js';
import type { Clock } from '../../src/domain/clock.js';
import { INTERNAL_HEADER } from '../../src/http/limits/ip.js';
import { installResponseCheck } from './openapi-check.js';
import type { ResponseCheck } from './openapi-check.js';

export interface Harness {
  url: string;
  f: Facilitator;
  ledger: LocalLedgerClient;
  dataDir: string;
  /** A funded buyer with an open channel to `payee`, and its voucher signer. */
  /** `batch: true`: the channel is bound to this facilitator as its receiver authorizer (batch-settlement). */
  buyer(o?: { payee?: string; deposit?: bigint; expiryLedger?: number; batch?: boolean }): Promise<Buyer>;
  /** Requirements for a per-request price paid to `payTo` (defaults: the demo seller, 5000). */
  requirements(
    overrides?: Omit<Partial<PaymentRequirements>, 'extra'> & { extra?: Partial<PaymentRequirements['extra']> },
  ): PaymentRequirements;
  /** The check of every answer against the OpenAPI document (violations fail close()). */
  responses: ResponseCheck;
  /** A seller token for `payTo` (minted by the facilitator, as POST /sellers/:payTo/token would). */
  sellerToken(payTo: string): string;
  /** POST /verify with a voucher; returns status and parsed body. */
  verify(
    payload: ChannelPayload,
    requirements?: PaymentRequirements,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  /** POST /settle with the body `verify` sends. */
  settle(
    payload: ChannelPayload,
    requirements?: PaymentRequirements,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  close(): Promise<void>;
}

export interface Buyer {
  keys: Keypair;
  voucherKey: Keypair;
  signer: ChannelSigner;
  channelId: bigint;
  payee: string;
}

/**
 * `watchPollMs`: how often the ledger watcher polls (50 ms here; a long one stands for a ledger whose
 * events lag). `ledger`: the facilitator's ledger port (with LEDGER_URL: the same ledger, for buyers).
 */
export async function startHarness(
  env: Record<string, string> = {},
  options: { clock?: Clock; watchPollMs?: number; signReceiptsInline?: boolean; ledger?: Ledger } = {},
): Promise<Harness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    LEDGER_SECONDS: '1',
    DEMO_SEED: '0',
    ...env,
  });
  const f = await createFacilitator({
    config,
    watchPollMs: options.watchPollMs ?? 50,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.ledger ? { ledger: options.ledger } : {}),
    ...(options.signReceiptsInline !== undefined ? { signReceiptsInline: options.signReceiptsInline } : {}),
  });
  // Every answer this facilitator gives the test is checked against its own OpenAPI document.
  const check = installResponseCheck(f.app);
  const url = await f.listen();
  // As the facilitator's own request: it counts against no test's rate limit.
  await check.load(url, { [INTERNAL_HEADER]: f.services.internalToken });
  const ledger = new LocalLedgerClient(env['LEDGER_URL'] ?? `${url}/ledger`);
  const info = await ledger.info();
  const demoPayTo = f.demoPayTo ?? randomKeypair().address;

  const requirements: Harness['requirements'] = (overrides = {}) => {
    const { extra, ...rest } = overrides;
    return {
      scheme: 'channel',
      network: info.network,
      asset: info.contracts.asset,
      payTo: demoPayTo,
      amount: '5000',
      unit: 'request',
      maxTimeoutSeconds: 60,
      ...rest,
      extra: {
        channelContract: info.contracts.channel,
        minDeposit: '5000000',
        facilitator: url,
        areFeesSponsored: true,
        ...extra,
      },
    };
  };

  /** A /verify or /settle request for a voucher, as a resource server sends it. */
  async function pay(
    route: string,
    payload: ChannelPayload,
    reqs: PaymentRequirements,
    headers: Record<string, string>,
  ) {
    const res = await fetch(`${url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: reqs, payload, resource: { url: `${url}/test/resource` } },
        paymentRequirements: reqs,
        method: 'GET',
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  }

  return {
    url,
    f,
    ledger,
    dataDir,
    requirements,
    async buyer(o = {}) {
      const payee = o.payee ?? demoPayTo;
      const opened = await openChannel(ledger, {
        payee,
        deposit: o.deposit ?? 5_000_000n,
        ...(o.expiryLedger === undefined ? {} : { expiryLedger: o.expiryLedger }),
        ...(o.batch ? { receiverAuthorizer: f.address } : {}),
      });
      return {
        keys: opened.payer,
        voucherKey: opened.voucherKey,
        signer: opened.signer,
        channelId: opened.channelId,
        payee,
      };
    },
    responses: check,
    sellerToken(payTo) {
      return f.services.sellerTokens.mint(payTo, Date.now() + 86_400_000).token;
    },
    verify: (payload, reqs = requirements(), headers = {}) => pay('/verify', payload, reqs, headers),
    settle: (payload, reqs = requirements(), headers = {}) => pay('/settle', payload, reqs, headers),
    async close() {
      await f.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (check.violations.length > 0)
        throw new Error(`answers that do not match the OpenAPI document:\n  ${check.violations.join('\n  ')}`);
    },
  };
}

/** A PAYMENT-SIGNATURE header for a voucher, in the x402 v2 form. */
export function paymentHeader(payload: ChannelPayload, accepted: PaymentRequirements): string {
  return encodeJsonHeader({ x402Version: 2, accepted, payload });
}
