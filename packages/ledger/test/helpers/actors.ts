// Test builders: an actor that signs and submits its own transactions, voucher signing, and
// snapshots of what a refused transaction must leave untouched.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCAL_PASSPHRASE, localContracts } from '../../src/index.js';
import type { Ledger, LedgerEvent, TxResult } from '../../src/index.js';
import { randomKeypair, signLedgerTx, toHex, voucherContext } from '@svc/core';
import type { Keypair, SignedLedgerTx } from '@svc/core';

export const PASS = LOCAL_PASSPHRASE;
export const CONTRACTS = localContracts();
export const ASSET = CONTRACTS.asset;
export const VOUCHERS = voucherContext(PASS, CONTRACTS.channel);

export function tempDir(prefix = 'svc-ledger-'): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export class Actor {
  constructor(
    readonly ledger: Ledger,
    readonly keys: Keypair = randomKeypair(),
  ) {}

  get address(): string {
    return this.keys.address;
  }

  async seq(): Promise<number> {
    return (await this.ledger.getAccount(this.address)).seq;
  }

  async balance(): Promise<bigint> {
    return balanceOf(this.ledger, this.address);
  }

  /** Signs `op` with the next seq (or the one given), without submitting. */
  async sign(op: string, args: Record<string, unknown>, seq?: number): Promise<SignedLedgerTx> {
    return signLedgerTx(this.keys, PASS, { source: this.address, seq: seq ?? (await this.seq()) + 1, op, args });
  }

  async send(op: string, args: Record<string, unknown>): Promise<TxResult> {
    return this.ledger.submit(await this.sign(op, args));
  }
}

export async function balanceOf(ledger: Ledger, address: string): Promise<bigint> {
  const account = await ledger.getAccount(address);
  return account.balances.find((b) => b.asset === ASSET)?.amount ?? 0n;
}

export function voucher(keys: Keypair, channelId: bigint | string, cumulative: bigint | string): string {
  return toHex(VOUCHERS.sign(keys, BigInt(channelId), BigInt(cumulative)));
}

export async function allEvents(ledger: Ledger, pageSize = 1000): Promise<LedgerEvent[]> {
  const out: LedgerEvent[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await ledger.events(cursor, pageSize);
    out.push(...page.events);
    cursor = page.cursor;
    if (page.events.length < pageSize) return out;
  }
}

/** Everything a refused transaction must leave as it was. */
export async function snapshot(ledger: Ledger, addresses: string[]) {
  const accounts = await Promise.all(addresses.map((a) => ledger.getAccount(a)));
  const events = await allEvents(ledger);
  return { accounts, lastEvent: events.at(-1)?.id ?? 0, eventCount: events.length };
}
