// The shared state of one contract case: a fresh ledger and three actors, plus the builders the
// cases use (open a channel, claim, expect a FAILED code).
import { expect } from 'vitest';
import { randomKeypair } from '@svc/core';
import type { Keypair } from '@svc/core';
import type { DexReserves, FaucetOptions, Ledger, LedgerFaucet, TxResult } from '../../src/index.js';
import { Actor, voucher } from '../helpers/actors.js';

export interface LedgerHarness {
  ledger: Ledger & LedgerFaucet;
  /** Moves the ledger's (fake) clock forward by whole ledgers. */
  advance(ledgers: number): void;
  close(): Promise<void>;
}

/** Options of a fresh ledger: other faucet limits, other DEX genesis reserves. */
export interface HarnessOptions {
  faucet?: FaucetOptions;
  dexReserves?: DexReserves;
}

export type CreateHarness = (options?: HarnessOptions) => Promise<LedgerHarness>;

export class ContractFixture {
  h!: LedgerHarness;
  ledger!: Ledger & LedgerFaucet;
  payer!: Actor;
  payee!: Actor;
  stranger!: Actor;
  voucherKeys!: Keypair;

  constructor(private readonly create: CreateHarness) {}

  async setUp(options?: HarnessOptions): Promise<void> {
    this.h = await this.create(options);
    this.ledger = this.h.ledger;
    this.payer = new Actor(this.ledger);
    this.payee = new Actor(this.ledger);
    this.stranger = new Actor(this.ledger);
    this.voucherKeys = randomKeypair();
  }

  async tearDown(): Promise<void> {
    await this.h.close();
  }

  /** Awaits a tx that must be FAILED with `code`, no events and a message. */
  async expectCode(result: Promise<TxResult>, code: number): Promise<TxResult> {
    const tx = await result;
    expect({ status: tx.status, code: tx.code }).toEqual({ status: 'FAILED', code });
    expect(tx.events).toEqual([]);
    expect(tx.message).toMatch(/\w/);
    return tx;
  }

  /** Opens a funded channel payer → payee expiring `expiryIn` ledgers from now; returns its id. */
  async openChannel(deposit = 1_000_000n, expiryIn = 1000, key = this.voucherKeys.publicKeyHex): Promise<bigint> {
    if ((await this.payer.balance()) < deposit) await this.ledger.faucet(this.payer.address);
    const latest = await this.ledger.latestLedger();
    const res = await this.payer.send('channel.open', {
      payee: this.payee.address,
      deposit: deposit.toString(),
      voucherKey: key,
      expiryLedger: latest + expiryIn,
    });
    expect(res.status).toBe('SUCCESS');
    return BigInt(String(res.result?.['channelId']));
  }

  /** `by` submits a claim of the voucher for `cumulative` (signed with the channel's key unless given). */
  claim(
    by: Actor,
    channelId: bigint,
    cumulative: bigint,
    signature = voucher(this.voucherKeys, channelId, cumulative),
  ): Promise<TxResult> {
    return by.send('channel.claim', { channelId: channelId.toString(), cumulative: cumulative.toString(), signature });
  }
}
