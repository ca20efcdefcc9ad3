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
  /** A voucher key for a channel a case opens by hand (one key opens one channel). */
  voucherKeys!: Keypair;
  /** The voucher key of each channel openChannel opened, by id. */
  readonly channelKeys = new Map<bigint, Keypair>();

  constructor(private readonly create: CreateHarness) {}

  async setUp(options?: HarnessOptions): Promise<void> {
    this.h = await this.create(options);
    this.ledger = this.h.ledger;
    this.payer = new Actor(this.ledger);
    this.payee = new Actor(this.ledger);
    this.stranger = new Actor(this.ledger);
    this.voucherKeys = randomKeypair();
    this.channelKeys.clear();
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

  /**
   * Opens a funded channel payer → payee expiring `expiryIn` ledgers from now, under a fresh
   * voucher key unless given (hex: a key with no secret here); returns its id.
   */
  async openChannel(
    deposit = 1_000_000n,
    expiryIn = 1000,
    key: Keypair | string = randomKeypair(),
    receiverAuthorizer?: string,
  ): Promise<bigint> {
    if ((await this.payer.balance()) < deposit) await this.ledger.faucet(this.payer.address);
    const latest = await this.ledger.latestLedger();
    const res = await this.payer.send('channel.open', {
      payee: this.payee.address,
      deposit: deposit.toString(),
      voucherKey: typeof key === 'string' ? key : key.publicKeyHex,
      expiryLedger: latest + expiryIn,
      ...(receiverAuthorizer !== undefined ? { receiverAuthorizer } : {}),
    });
    expect(res.status).toBe('SUCCESS');
    const id = BigInt(String(res.result?.['channelId']));
    if (typeof key !== 'string') this.channelKeys.set(id, key);
    return id;
  }

  /** The voucher key channel `id` was opened with by openChannel (else the case's own voucherKeys). */
  keyOf(id: bigint): Keypair {
    return this.channelKeys.get(id) ?? this.voucherKeys;
  }

  /** `by` submits a claim of the voucher for `cumulative` (signed with the channel's key unless given). */
  claim(
    by: Actor,
    channelId: bigint,
    cumulative: bigint,
    signature = voucher(this.keyOf(channelId), channelId, cumulative),
  ): Promise<TxResult> {
    return by.send('channel.claim', { channelId: channelId.toString(), cumulative: cumulative.toString(), signature });
  }
}
