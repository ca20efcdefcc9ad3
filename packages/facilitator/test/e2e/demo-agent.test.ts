// The demo on a fresh `svc start` (no configuration but a data dir and a port): the world is
// seeded, and POST /demo/agent/run produces within a minute book payments, a ticker stream and a
// chat stream, visible in /events, /stats and the seller's revenue.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseParser } from '@svc/sdk';
import { startChild } from '../helpers/process.js';
import type { Child } from '../helpers/process.js';

interface Frame {
  type: string;
  account: string | null;
  data: Record<string, unknown>;
}
interface Info {
  seller: string;
  controlKeyRequired: boolean;
  world: { ready: boolean; account: string | null; owner: string; agentKey: string; investors: string[] } | null;
  agent: {
    available: boolean;
    running: boolean;
    run: {
      id: string;
      status: string;
      paid: string;
      channelId: string | null;
      steps: { name: string; status: string; detail: string; paid: string }[];
    } | null;
  };
}

const RUN_DEADLINE_MS = 60_000;

async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the demo agent on a fresh start', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-demo-'));
  let child: Child;
  const get = async <T>(p: string): Promise<T> => (await (await fetch(`${child.url}${p}`)).json()) as T;

  beforeAll(async () => {
    child = await startChild({ DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await child.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('seeds a world: the agent’s smart account under a policy, two investors and a credit line in the pool', async () => {
    const info = await waitFor(
      'the seeded world',
      async () => {
        const i = await get<Info>('/demo/info');
        return i.world?.ready ? i : null;
      },
      20_000,
    );
    expect(info.controlKeyRequired).toBe(false);
    const account = info.world!.account!;
    expect(account).toMatch(/^C/);
    const view = await get<{ kind: string; frozen: boolean; policy: { agentKey: string; payees: string[] } }>(
      `/accounts/${account}`,
    );
    expect(view).toMatchObject({
      kind: 'smart',
      frozen: false,
      policy: { agentKey: info.world!.agentKey, payees: [info.seller] },
    });
    const float = await get<{
      pool: { investorCount: number; lineCount: number; utilizationBps: number };
      lines: { account: string; liquidatable: boolean }[];
    }>('/float');
    expect(float.pool).toMatchObject({ investorCount: 2, lineCount: 1 });
    expect(float.pool.utilizationBps).toBeGreaterThan(0);
    expect(float.lines[0]).toMatchObject({ account, liquidatable: false });
  });

  it(
    'runs the agent once (a second start is refused with 409) and everything it paid shows up',
    async () => {
      const started = await fetch(`${child.url}/demo/agent/run`, { method: 'POST' });
      expect(started.status).toBe(202);
      const run = (await started.json()) as { id: string; status: string };
      expect(run.status).toBe('running');
      const again = await fetch(`${child.url}/demo/agent/run`, { method: 'POST' });
      expect(again.status).toBe(409);
      expect(((await again.json()) as { error: string }).error).toBe('CONFLICT');

      // Follow the run on the live event feed until the agent says it has finished.
      const feed = await fetch(`${child.url}/events`, { signal: AbortSignal.timeout(RUN_DEADLINE_MS) });
      const frames: Frame[] = [];
      const parser = new SseParser();
      const reader = feed.body!.getReader();
      try {
        while (!frames.some((f) => f.type === 'demo.agent.finished')) {
          const { done, value } = await reader.read();
          if (done) break;
          for (const e of parser.push(value)) frames.push(JSON.parse(e.data) as Frame);
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }

      const info = await get<Info>('/demo/info');
      const last = info.agent.run!;
      expect(last.id).toBe(run.id);
      expect(last.steps.map((s) => [s.name, s.status])).toEqual([
        ['channel', 'done'],
        ['book', 'done'],
        ['ticker', 'done'],
        ['chat', 'done'],
        ['stopped', 'done'],
      ]);
      expect(last.status).toBe('done');
      expect(last.steps.find((s) => s.name === 'stopped')!.detail).toContain('ACCOUNT_FROZEN');
      expect(info.agent.running).toBe(false);

      const accepted = frames.filter((f) => f.type === 'voucher.accepted');
      const resources = new Set(accepted.map((f) => new URL(String(f.data['resource'])).pathname));
      expect([...resources].sort()).toEqual(['/demo/book', '/demo/chat', '/demo/ticker/stream']);
      expect(accepted.filter((f) => String(f.data['resource']).endsWith('/demo/book'))).toHaveLength(3);
      const streams = frames
        .filter((f) => f.type === 'stream.ended')
        .map((f) => [new URL(String(f.data['resource'])).pathname, f.data['reason']]);
      expect(streams).toEqual(
        expect.arrayContaining([
          ['/demo/ticker/stream', 'done'],
          ['/demo/chat', 'done'],
          ['/demo/ticker/stream', 'ACCOUNT_FROZEN'],
        ]),
      );
      expect(frames.filter((f) => f.type === 'account.frozen').map((f) => f.data['frozen'])).toEqual([true, false]);
      const paid = accepted.reduce((sum, f) => sum + BigInt(String(f.data['delta'])), 0n);
      expect(paid.toString()).toBe(last.paid);

      const stats = await get<{ vouchersAccepted: number; volume: string }>('/stats');
      expect(stats.vouchersAccepted).toBe(accepted.length);
      expect(stats.volume).toBe(last.paid);
      const revenue = await get<{ totals: { earned: string; payments: number } }>(`/sellers/${info.seller}/revenue`);
      expect(revenue.totals).toMatchObject({ earned: last.paid, payments: accepted.length });
      const discovery = await get<{ items: { resource: string; payments: number }[] }>(
        `/discovery/resources?payTo=${info.seller}`,
      );
      expect(discovery.items.map((i) => new URL(i.resource).pathname).sort()).toEqual([
        '/demo/book',
        '/demo/chat',
        '/demo/ticker/stream',
      ]);
    },
    RUN_DEADLINE_MS + 15_000,
  );
});
