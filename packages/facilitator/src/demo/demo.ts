// The demo, wired once: the demo seller's address, the world seeded on the local ledger and the
// built-in buyer agent. The world and the agent need a ledger that speaks the local ledger's HTTP
// routes (in-process under /ledger, or LEDGER_URL); on Stellar the demo seller still sells, but
// there is no faucet to seed a world with, so the agent is unavailable.
import { LocalLedgerClient } from '@svc/sdk';
import type { Clock } from '../domain/clock.js';
import type { EventLog } from '../domain/event-log.js';
import { loadOrCreateKey } from '../keys.js';
import { DemoAgent } from './agent.js';
import { DemoWorldSeeder } from './world.js';
import type { DemoWorld } from './world.js';

export interface DemoOptions {
  dataDir: string;
  /** The local ledger's base URL once known (null: no local ledger). */
  ledgerUrl(): string | null;
  baseUrl(): string;
  receiptSigner: string;
  tickerSliceSeconds: number;
  isFrozen(account: string): Promise<boolean>;
  events: EventLog;
  clock: Clock;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export class Demo {
  readonly payTo: string;
  readonly seeder: DemoWorldSeeder;
  readonly agent: DemoAgent;
  private seeding: Promise<DemoWorld> | null = null;
  private seeded: DemoWorld | null = null;
  private client: { url: string; ledger: LocalLedgerClient } | null = null;

  constructor(private readonly o: DemoOptions) {
    this.payTo = loadOrCreateKey(o.dataDir, 'demo-seller.secret').address;
    this.seeder = new DemoWorldSeeder(o.dataDir, this.payTo);
    this.agent = new DemoAgent({
      world: () => this.world(),
      ledger: () => this.ledger(),
      baseUrl: () => o.baseUrl(),
      receiptSigner: o.receiptSigner,
      tickerSliceSeconds: o.tickerSliceSeconds,
      isFrozen: (account) => o.isFrozen(account),
      topUp: (ledger, account) => this.seeder.topUpAccount(ledger, account),
      events: o.events,
      clock: o.clock,
      log: o.log,
    });
  }

  /** Whether this ledger can hold the demo world (a local ledger). */
  get available(): boolean {
    return this.o.ledgerUrl() !== null;
  }

  /** The world once seeded (null before, or while seeding). */
  get ready(): DemoWorld | null {
    return this.seeded;
  }

  /** Seeds what is missing, once; a failed attempt is retried by the next call. */
  world(): Promise<DemoWorld> {
    this.seeding ??= Promise.resolve()
      .then(() => this.seeder.seed(this.ledger(), this.o.log))
      .then(
        (world) => (this.seeded = world),
        (err: unknown) => {
          this.seeding = null;
          throw err;
        },
      );
    return this.seeding;
  }

  /** Stops the agent's run and waits for a seeding under way (at shutdown). */
  async close(): Promise<void> {
    await this.agent.stop();
    await this.seeding?.catch(() => undefined);
  }

  /** One client per ledger URL, so its per-source ordering of submissions holds across requests. */
  ledger(): LocalLedgerClient {
    const url = this.o.ledgerUrl();
    if (url === null) throw new Error('the demo world needs the local ledger (LEDGER=local)');
    if (this.client?.url !== url) this.client = { url, ledger: new LocalLedgerClient(url) };
    return this.client.ledger;
  }
}
