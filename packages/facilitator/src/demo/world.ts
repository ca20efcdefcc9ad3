// The demo world `npm start` seeds on the local ledger, so every endpoint has something real to
// show: the demo seller, an agent's smart account (owned by a demo owner, spending under a policy
// that names the seller), two investors in the credit pool, and a credit line to the agent's
// account. Every step is a signed ledger transaction through the ledger's HTTP routes, as any
// client would send it, and every step first looks at the ledger: seeding is idempotent across
// restarts (keys in DATA_DIR, mode 0600; the smart account's address in demo-world.json).
import fs from 'node:fs';
import path from 'node:path';
import type { Keypair } from '@svc/core';
import type { LocalLedgerClient } from '@svc/sdk';
import { loadOrCreateKey } from '../keys.js';

const UNIT = 10_000_000n; // one whole unit of the 7-decimal asset
/** The agent's policy: one channel deposit at most 10 units, 1000 units a day, the demo seller only. */
export const DEMO_POLICY = { perTxCap: 10n * UNIT, dailyCap: 1000n * UNIT } as const;
/** About a year of 5-second ledgers. */
const POLICY_LEDGERS = 6_307_200;
/** What the account keeps of its own; topped up by its owner before each agent run. */
export const DEMO_ACCOUNT_FLOAT = 100n * UNIT;
export const DEMO_INVESTMENTS = [1000n * UNIT, 500n * UNIT] as const;
export const DEMO_LINE_LIMIT = 200n * UNIT;
const OWNER_FLOAT = 1000n * UNIT;

export interface DemoWorld {
  seller: string;
  owner: Keypair;
  agent: Keypair;
  /** The agent's smart account (C…). */
  account: string;
  investors: Keypair[];
}

export interface DemoWorldLog {
  info(obj: object, msg: string): void;
}

interface WorldFile {
  account?: string;
}

export class DemoWorldSeeder {
  readonly owner: Keypair;
  readonly agent: Keypair;
  readonly investors: Keypair[];
  private readonly file: string;

  constructor(
    private readonly dataDir: string,
    readonly seller: string,
  ) {
    this.owner = loadOrCreateKey(dataDir, 'demo-owner.secret');
    this.agent = loadOrCreateKey(dataDir, 'demo-agent.secret');
    this.investors = DEMO_INVESTMENTS.map((_, i) => loadOrCreateKey(dataDir, `demo-investor-${i + 1}.secret`));
    this.file = path.join(dataDir, 'demo-world.json');
  }

  /** The smart account's address once seeded (null before). */
  knownAccount(): string | null {
    return this.read().account ?? null;
  }

  /** Seeds whatever is missing; resolves the world. */
  async seed(ledger: LocalLedgerClient, log: DemoWorldLog): Promise<DemoWorld> {
    await this.fund(ledger, this.owner.address, OWNER_FLOAT);
    const account = await this.smartAccount(ledger, log);
    await this.topUpAccount(ledger, account);
    const pool = await ledger.pool();
    if (pool) {
      for (const [i, investor] of this.investors.entries()) {
        if (pool.positions.some((p) => p.address === investor.address)) continue;
        const amount = DEMO_INVESTMENTS[i]!;
        await this.fund(ledger, investor.address, amount);
        const { shares } = await ledger.poolDeposit({ from: investor, amount });
        log.info(
          { investor: investor.address, amount: amount.toString(), shares: shares.toString() },
          'demo investor joined the credit pool',
        );
      }
      if (!pool.lines.some((l) => l.account === account)) {
        const line = await ledger.openLine({ owner: this.owner, account, limit: DEMO_LINE_LIMIT });
        log.info({ account, limit: line.limit.toString(), debt: line.debt.toString() }, 'demo credit line opened');
      }
    }
    return { seller: this.seller, owner: this.owner, agent: this.agent, account, investors: this.investors };
  }

  /** Keeps the smart account's own funds at DEMO_ACCOUNT_FLOAT (its owner tops it up). */
  async topUpAccount(ledger: LocalLedgerClient, account: string): Promise<void> {
    const held = await ledger.balance(account);
    const line = (await ledger.pool())?.lines.find((l) => l.account === account);
    const wanted = DEMO_ACCOUNT_FLOAT + (line?.debt ?? 0n);
    if (held >= wanted) return;
    await this.fund(ledger, this.owner.address, wanted - held);
    await ledger.transfer({ from: this.owner, to: account, amount: wanted - held });
  }

  private async smartAccount(ledger: LocalLedgerClient, log: DemoWorldLog): Promise<string> {
    const known = this.read().account;
    if (known) {
      const view = await ledger.account(known);
      if (view.account?.owner === this.owner.address) return known;
    }
    const info = await ledger.info();
    const policy = {
      agentKey: this.agent.address,
      ...DEMO_POLICY,
      payees: [this.seller],
      expiresLedger: info.latestLedger + POLICY_LEDGERS,
    };
    const { address } = await ledger.createAccount({ owner: this.owner, policy });
    this.write({ account: address });
    log.info({ account: address, owner: this.owner.address, agent: this.agent.address }, 'demo smart account created');
    return address;
  }

  /** Tops `address` up from the faucet until it holds `amount`. */
  private async fund(ledger: LocalLedgerClient, address: string, amount: bigint): Promise<void> {
    while ((await ledger.balance(address)) < amount) await ledger.faucet(address);
  }

  private read(): WorldFile {
    try {
      return JSON.parse(fs.readFileSync(this.file, 'utf8')) as WorldFile;
    } catch {
      return {};
    }
  }

  private write(world: WorldFile): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(world, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
  }
}
