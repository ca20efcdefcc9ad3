// The built-in demo buyer (POST /demo/agent/run): an AI agent's smart account paying the demo
// seller with the public sdk, over real HTTP, exactly as an outside buyer would. One run:
//
//   channel  opens a channel from the smart account (signed by the agent key, held to its policy)
//   book     buys GET /demo/book three times (per request)
//   ticker   streams the ticker for a slice and a bit (per second)
//   chat     streams the chat answer to the end (per token)
//   stopped  streams the ticker again; at the first tick the owner freezes the account on the
//            ledger, the next slice's voucher is refused and the stream ends ACCOUNT_FROZEN;
//            the owner then unfreezes it
//
// One run at a time (a second is refused with 409 while one runs). Progress is in GET /demo/info
// and in the event log (demo.agent.started, demo.agent.step, demo.agent.finished).
import { randomUUID } from 'node:crypto';
import { AGENT_STEPS, SvcError, formatUnits, randomKeypair } from '@svc/core';
import type { AgentRun, AgentStepName } from '@svc/core';
import { ChannelSigner, payFetch, streamPaid } from '@svc/sdk';
import type { LocalLedgerClient, StreamPaidResult } from '@svc/sdk';
import type { Clock } from '../domain/clock.js';
import type { EventLog } from '../domain/event-log.js';
import type { DemoWorld } from './world.js';

export const AGENT_BOOKS = 3;
/** What the agent deposits into each run's channel: 0.5 units, ample for one run. */
export const AGENT_DEPOSIT = 5_000_000n;
const THAW_WAIT_MS = 10_000;
const CHAT_PROMPT = JSON.stringify({ prompt: 'What is a payment channel?' });

export interface DemoAgentDeps {
  /** Seeds (or finds) the demo world; the run needs its smart account. */
  world(): Promise<DemoWorld>;
  ledger(): LocalLedgerClient;
  /** Where the agent reaches the demo seller (this process). */
  baseUrl(): string;
  /** The facilitator's receipt signer, trusted for every receipt. */
  receiptSigner: string;
  tickerSliceSeconds: number;
  /** Whether the facilitator sees `account` as frozen (it learns of freezes from the ledger watcher). */
  isFrozen(account: string): Promise<boolean>;
  /** Keeps the smart account's own funds topped up before a run. */
  topUp(ledger: LocalLedgerClient, account: string): Promise<void>;
  events: EventLog;
  clock: Clock;
  log: { warn(obj: object, msg: string): void };
}

export class DemoAgent {
  private run: AgentRun | null = null;
  private running: Promise<void> | null = null;
  private abort: AbortController | null = null;

  constructor(private readonly deps: DemoAgentDeps) {}

  /** The run under way, or the last one (null before the first). */
  current(): AgentRun | null {
    return this.run ? structuredClone(this.run) : null;
  }

  get busy(): boolean {
    return this.running !== null;
  }

  /** Starts a run; CONFLICT while one runs. Resolves at once with the run's first state. */
  start(): AgentRun {
    if (this.running)
      throw new SvcError(
        'CONFLICT',
        `The demo agent is already running (run ${this.run?.id ?? ''}); one run at a time.`,
      );
    const run: AgentRun = {
      id: randomUUID(),
      status: 'running',
      startedAt: this.iso(),
      finishedAt: null,
      account: null,
      channelId: null,
      paid: '0',
      steps: AGENT_STEPS.map((name) => ({
        name,
        status: 'pending',
        detail: '',
        paid: '0',
        startedAt: null,
        finishedAt: null,
      })),
    };
    this.run = run;
    this.abort = new AbortController();
    this.running = this.execute(run, this.abort.signal).finally(() => {
      this.running = null;
      this.abort = null;
    });
    return structuredClone(run);
  }

  /** Resolves when the run under way (if any) has finished. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** Cuts the run under way short (at shutdown) and waits for it. */
  async stop(): Promise<void> {
    this.abort?.abort();
    await this.running;
  }

  private async execute(run: AgentRun, signal: AbortSignal): Promise<void> {
    let world: DemoWorld | null = null;
    try {
      world = await this.deps.world();
      run.account = world.account;
      await this.record('demo.agent.started', world.account, {
        runId: run.id,
        account: world.account,
        steps: [...AGENT_STEPS],
      });
      const ledger = this.deps.ledger();
      const seeded = world;
      const signer = await this.step(run, 'channel', async () => {
        await this.deps.topUp(ledger, seeded.account);
        const opened = await this.openChannel(ledger, seeded);
        run.channelId = opened.channelId.toString();
        return {
          paid: 0n,
          detail: `channel ${opened.channelId} from ${seeded.account} to ${seeded.seller}, deposit ${AGENT_DEPOSIT} (signed by the agent key, within its policy)`,
          value: opened,
        };
      });
      if (!signer) throw new Error('no channel was opened');
      await this.step(run, 'book', async () => {
        let paid = 0n;
        for (let i = 0; i < AGENT_BOOKS; i++) {
          const res = await payFetch(
            `${this.deps.baseUrl()}/demo/book`,
            { signal },
            { signer, trustedSigners: [this.deps.receiptSigner] },
          );
          await res.body?.cancel();
          if (!res.ok || !res.payment) throw new Error(`GET /demo/book answered ${res.status}${rejection(res)}`);
          paid += BigInt(res.payment.delta);
        }
        return { paid, detail: `${AGENT_BOOKS} books bought` };
      });
      const tickerSeconds = Math.min(60, this.deps.tickerSliceSeconds + 2);
      await this.step(run, 'ticker', async () => {
        const result = await streamPaid({
          url: `${this.deps.baseUrl()}/demo/ticker/stream?seconds=${tickerSeconds}`,
          signer,
          signal,
          trustedSigners: [this.deps.receiptSigner],
        });
        return { paid: result.paid, detail: streamDetail(result, 'tick'), ok: result.ended.reason === 'done' };
      });
      await this.step(run, 'chat', async () => {
        const result = await streamPaid({
          url: `${this.deps.baseUrl()}/demo/chat`,
          method: 'POST',
          body: CHAT_PROMPT,
          signer,
          signal,
          trustedSigners: [this.deps.receiptSigner],
        });
        return { paid: result.paid, detail: streamDetail(result, 'token'), ok: result.ended.reason === 'done' };
      });
      await this.step(run, 'stopped', () => this.stoppedByOwner(ledger, seeded, signer, signal));
      run.status = run.steps.every((s) => s.status === 'done') ? 'done' : 'failed';
    } catch (err) {
      run.status = 'failed';
      // The step the failure stopped (it may not have started: the channel opens before it) is
      // the one that failed, with the reason; the steps after it never ran and stay pending.
      const stopped = run.steps.find((s) => s.status === 'pending' || s.status === 'running');
      if (stopped) {
        stopped.status = 'failed';
        if (!stopped.detail) stopped.detail = (err as Error).message;
      }
      if (!world) this.deps.log.warn({ err }, 'the demo world is not ready');
    } finally {
      run.finishedAt = this.iso();
      if (world) {
        await this.record('demo.agent.finished', world.account, {
          runId: run.id,
          status: run.status,
          paid: run.paid,
          channelId: run.channelId,
        }).catch(() => undefined);
      }
    }
  }

  private async openChannel(ledger: LocalLedgerClient, world: DemoWorld): Promise<ChannelSigner> {
    const info = await ledger.info();
    const voucherKey = randomKeypair();
    const opened = await ledger.openChannel({
      payer: { account: world.account, signer: world.agent },
      payee: world.seller,
      deposit: AGENT_DEPOSIT,
      voucherKey,
    });
    return new ChannelSigner({
      channelId: opened.channelId,
      deposit: AGENT_DEPOSIT,
      voucherKey,
      networkPassphrase: info.passphrase,
      channelContract: info.contracts.channel,
      network: info.network,
      payee: world.seller,
      asset: info.contracts.asset,
    });
  }

  /** The ticker again, frozen by the owner at the first tick; unfrozen afterwards, whatever happens. */
  private async stoppedByOwner(
    ledger: LocalLedgerClient,
    world: DemoWorld,
    signer: ChannelSigner,
    signal: AbortSignal,
  ): Promise<{ paid: bigint; detail: string; ok: boolean }> {
    const owner: { freezing: Promise<unknown> | null } = { freezing: null };
    const seconds = Math.min(300, this.deps.tickerSliceSeconds * 3);
    try {
      const result = await streamPaid({
        url: `${this.deps.baseUrl()}/demo/ticker/stream?seconds=${seconds}`,
        signer,
        signal,
        trustedSigners: [this.deps.receiptSigner],
        onEvent: (e) => {
          if (e.event === 'tick' && !owner.freezing)
            owner.freezing = ledger.freeze({ owner: world.owner, account: world.account, frozen: true });
        },
      });
      await owner.freezing;
      return {
        paid: result.paid,
        detail: `the owner froze the account at the first tick: ${streamDetail(result, 'tick')}`,
        ok: result.ended.reason === 'ACCOUNT_FROZEN',
      };
    } finally {
      await owner.freezing?.catch(() => undefined);
      if (owner.freezing) {
        await ledger.freeze({ owner: world.owner, account: world.account, frozen: false });
        // The run ends once the facilitator has seen the account thawed, so the next run can pay.
        const deadline = this.deps.clock.now() + THAW_WAIT_MS;
        while ((await this.deps.isFrozen(world.account)) && this.deps.clock.now() < deadline) await sleep(50);
      }
    }
  }

  private async step<T>(
    run: AgentRun,
    name: AgentStepName,
    body: () => Promise<{ paid: bigint; detail: string; ok?: boolean; value?: T }>,
  ): Promise<T | undefined> {
    if (this.abort?.signal.aborted) throw new Error('cut short: the facilitator is shutting down');
    const step = run.steps.find((s) => s.name === name)!;
    step.status = 'running';
    step.startedAt = this.iso();
    try {
      const out = await body();
      step.paid = formatUnits(out.paid);
      step.detail = out.detail;
      step.status = out.ok === false ? 'failed' : 'done';
      run.paid = formatUnits(BigInt(run.paid) + out.paid);
      return out.value;
    } catch (err) {
      step.status = 'failed';
      step.detail = (err as Error).message;
      throw err;
    } finally {
      step.finishedAt = this.iso();
      await this.record('demo.agent.step', run.account, {
        runId: run.id,
        step: name,
        status: step.status,
        paid: step.paid,
        detail: step.detail,
      }).catch(() => undefined);
    }
  }

  private async record(type: string, account: string | null, data: Record<string, unknown>): Promise<void> {
    await this.deps.events.commit([
      {
        op: 'event',
        event: { type, source: 'facilitator', ts: this.iso(), ...(account ? { accounts: [account] } : {}), data },
      },
    ]);
  }

  private iso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function streamDetail(result: StreamPaidResult, unit: string): string {
  const count = result.events.filter((e) => e.event === unit).length;
  return `${count} ${unit}s, ${result.vouchers} voucher${result.vouchers === 1 ? '' : 's'}, ended ${result.ended.reason}`;
}

function rejection(res: Response): string {
  const header = res.headers.get('payment-required');
  if (!header) return '';
  try {
    const body = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { error?: string };
    return body.error ? ` (${body.error})` : '';
  } catch {
    return '';
  }
}
