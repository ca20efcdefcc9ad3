// Whether a payer is frozen (docs/protocol.md#errors: "frozen payer" comes before the signature check).
// Only smart accounts (C… addresses) can be frozen, so a plain G… payer costs nothing; a smart
// account's state is read from the ledger once, then kept current by the ledger watcher's
// `account.frozen` events.
import { isContractAddress } from '@svc/core';
import type { Ledger } from '@svc/ledger';

const MAX_CACHED = 50_000;

export class AccountBook {
  private readonly frozen = new Map<string, boolean>();

  constructor(private readonly ledger: Ledger) {}

  async isFrozen(address: string): Promise<boolean> {
    if (!isContractAddress(address)) return false;
    const known = this.frozen.get(address);
    if (known !== undefined) return known;
    const account = await this.ledger.getAccount(address);
    const frozen = account.account?.frozen ?? false;
    this.remember(address, frozen);
    return frozen;
  }

  /** From the ledger watcher. */
  setFrozen(address: string, frozen: boolean): void {
    this.remember(address, frozen);
  }

  private remember(address: string, frozen: boolean): void {
    if (this.frozen.size >= MAX_CACHED) this.frozen.clear();
    this.frozen.set(address, frozen);
  }
}
