// The facilitator's domain without HTTP: the adapters the configuration names (SQLite in a temporary
// data directory, the in-process local ledger) and the domain built on them, as the composition
// root builds them — for tests of the verifier, payments and streams that run in milliseconds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomKeypair, signLedgerTx } from '@svc/core';
import type { Keypair, PaymentRequirements } from '@svc/core';
import type { LocalLedger } from '@svc/ledger';
import { ChannelSigner } from '@svc/sdk';
import { openAdapters } from '../../src/composition/adapters.js';
import type { Adapters } from '../../src/composition/adapters.js';
import { createDomain } from '../../src/composition/domain.js';
import type { Domain } from '../../src/composition/domain.js';
import { loadConfig } from '../../src/config.js';
import { SYSTEM_CLOCK } from '../../src/domain/clock.js';
import { startLatestLedger } from '../../src/domain/ledger-connection.js';
import { createLogger } from '../../src/logger.js';
import type { Services } from '../../src/services.js';

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
      const signer = new ChannelSigner({
        channelId,
        deposit,
        voucherKey,
        networkPassphrase: info.passphrase,
        channelContract: info.contracts.channel,
        network: info.network,
        payee,
        asset: info.contracts.asset,
        ...(authorizer ? { receiverAuthorizer: authorizer } : {}),
      });
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
