// The demo controls: GET /demo/info, the x-demo-key check (constant time) when DEMO_CONTROL_KEY is
// set, POST /demo/owner/freeze on the ledger, and the per-IP costly limit on both POSTs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const KEY = 'demo-control-key-for-tests';

interface Info {
  seller: string;
  resources: { path: string; unit: string; price: string; slice: number | null; sliceAmount: string | null }[];
  controlKeyRequired: boolean;
  world: { ready: boolean; account: string | null } | null;
  agent: { available: boolean; running: boolean; run: unknown };
}

describe('the demo controls with DEMO_CONTROL_KEY set', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ DEMO_CONTROL_KEY: KEY, PRICE_BOOK_PER_REQUEST: '7000', TICKER_SLICE_SECONDS: '3' });
  });
  afterAll(() => h.close());

  const post = async (path: string, body: unknown, key?: string) => {
    const res = await fetch(`${h.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-demo-key': key }) },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  it('GET /demo/info shows the live prices, the seller and that a key is required', async () => {
    const info = (await (await fetch(`${h.url}/demo/info`)).json()) as Info;
    expect(info.seller).toBe(h.f.demoPayTo);
    expect(info.controlKeyRequired).toBe(true);
    expect(info.resources).toEqual([
      expect.objectContaining({ path: '/demo/book', unit: 'request', price: '7000', slice: null }),
      // At most 100 tokens at 200: charged the tokens produced.
      expect.objectContaining({ path: '/demo/summary', unit: 'request', price: '20000', slice: null }),
      expect.objectContaining({
        path: '/demo/ticker/stream',
        unit: 'second',
        price: '1000',
        slice: 3,
        sliceAmount: '3000',
      }),
      expect.objectContaining({ path: '/demo/chat', unit: 'token', price: '200', slice: 50, sliceAmount: '10000' }),
    ]);
    expect(info.agent).toEqual({ available: true, running: false, run: null });
    expect(info.world?.ready).toBe(false); // DEMO_SEED=0 in the harness: seeded on first use
  });

  it('refuses both controls without the key or with a wrong one (401), before doing anything', async () => {
    for (const key of [undefined, '', 'wrong', `${KEY}x`, KEY.slice(0, -1)]) {
      const freeze = await post('/demo/owner/freeze', { frozen: true }, key);
      expect(freeze.status, String(key)).toBe(401);
      expect(freeze.body.error).toBe('UNAUTHORIZED');
      expect((await post('/demo/agent/run', {}, key)).status).toBe(401);
    }
    expect(((await (await fetch(`${h.url}/demo/info`)).json()) as Info).agent.run).toBeNull();
  });

  it('freezes and unfreezes the demo smart account on the ledger with the key', async () => {
    const frozen = await post('/demo/owner/freeze', { frozen: true }, KEY);
    expect(frozen.status).toBe(200);
    const account = String(frozen.body['account']);
    expect(frozen.body).toMatchObject({ frozen: true });
    expect(account).toMatch(/^C/);
    expect((await h.ledger.account(account)).account?.frozen).toBe(true);
    const view = (await (await fetch(`${h.url}/accounts/${account}`)).json()) as { frozen: boolean };
    expect(view.frozen).toBe(true);
    const info = (await (await fetch(`${h.url}/demo/info`)).json()) as Info;
    expect(info.world).toMatchObject({ ready: true, account });

    expect((await post('/demo/owner/freeze', { frozen: false }, KEY)).status).toBe(200);
    expect((await h.ledger.account(account)).account?.frozen).toBe(false);
  });

  it('a run started while the account is frozen fails, and the step that failed says so: no step stays pending with an error', async () => {
    expect((await post('/demo/owner/freeze', { frozen: true }, KEY)).status).toBe(200);
    try {
      expect((await post('/demo/agent/run', {}, KEY)).status).toBe(202);
      type Step = { name: string; status: string; detail: string };
      let run: { status: string; steps: Step[] } | null = null;
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const info = (await (await fetch(`${h.url}/demo/info`)).json()) as {
          agent: { running: boolean; run: { status: string; steps: Step[] } | null };
        };
        run = info.agent.run;
        if (!info.agent.running && run && run.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(run?.status).toBe('failed');
      expect(run!.steps.filter((st) => st.status === 'pending' && st.detail !== '')).toEqual([]);
      const failed = run!.steps.find((st) => st.status === 'failed');
      expect(failed?.detail, JSON.stringify(run)).toMatch(/frozen/i);
    } finally {
      await post('/demo/owner/freeze', { frozen: false }, KEY);
    }
  }, 60_000);

  it('validates the body', async () => {
    for (const body of [{}, { frozen: 'yes' }, { frozen: true, extra: 1 }, []]) {
      const res = await post('/demo/owner/freeze', body, KEY);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('BAD_REQUEST');
    }
  });
});

describe('the costly limit on the demo controls', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ IP_COSTLY_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(() => h.close());

  it('answers the request past the limit with 429 and Retry-After, counting both controls together', async () => {
    const statuses: number[] = [];
    let last: Response | null = null;
    for (const [path, body] of [
      ['/demo/owner/freeze', { frozen: 'no' }],
      ['/demo/owner/freeze', { frozen: 'no' }],
      ['/demo/agent/run', null],
      ['/demo/owner/freeze', { frozen: false }],
    ] as const) {
      last = await fetch(`${h.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([400, 400, 202, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await last!.json()) as { error: string }).error).toBe('RATE_LIMITED');
    await h.f.services.demo!.agent.stop();
  });
});
