// Store contract: events — ids strictly increasing in store order, the stored shape, and every
// query (after/before/order/limit/account/channelId/types).
import { describe, expect, it } from 'vitest';
import type { StoredEvent, WriteOp } from '../../src/store/index.js';
import { OTHER_PAYEE, PAYEE, PAYER, event, iso } from './builders.js';
import type { Section } from './contract-context.js';

const CAROL = 'GCAROL';

async function seed(store: ReturnType<Parameters<Section>[0]>['store']): Promise<StoredEvent[]> {
  const ops: WriteOp[][] = [
    [{ op: 'event', event: event({ type: 'x', channelId: 1n, accounts: [PAYER, PAYEE], data: { n: 1 } }) }],
    [{ op: 'event', event: event({ type: 'y', channelId: 2n, accounts: [PAYEE, CAROL], data: { n: 2 } }) }],
    [{ op: 'event', event: event({ type: 'x', accounts: [], data: { n: 3 } }) }],
    [
      { op: 'event', event: event({ type: 'z', channelId: 1n, accounts: [CAROL], data: { n: 4 } }) },
      {
        op: 'event',
        event: event({ type: 'y', source: 'ledger', channelId: 1n, accounts: [OTHER_PAYEE, PAYER], data: { n: 5 } }),
      },
    ],
  ];
  const stored: StoredEvent[] = [];
  for (const call of ops) {
    const out = await store.write(call);
    if (!out.ok) throw new Error('seed failed');
    stored.push(...out.events);
  }
  return stored;
}

export const eventSection: Section = (ctx) => {
  describe('events', () => {
    it('stores events with strictly increasing ids and reports them exactly as events() reads them', async () => {
      const { store } = ctx();
      expect(await store.lastEventId()).toBe(0);
      const stored = await seed(store);
      const ids = stored.map((e) => e.id);
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
      expect(await store.events({ limit: 100 })).toEqual(stored);
      expect(await store.lastEventId()).toBe(ids.at(-1));
      expect(stored[0]).toEqual({
        id: ids[0],
        type: 'x',
        source: 'facilitator',
        ts: iso(2),
        channelId: 1n,
        account: PAYER,
        accounts: [PAYER, PAYEE],
        data: { n: 1 },
      });
      expect(stored[2]).toMatchObject({ channelId: null, account: null, accounts: [] });
    });

    it('keeps event data as the JSON object stored', async () => {
      const { store } = ctx();
      const data = {
        s: 'ü "quoted" \n',
        n: -1.5,
        big: '170141183460469231731687303715884105727',
        t: true,
        f: false,
        z: null,
        o: { a: [1, 'b', { c: null }] },
        e: [],
      };
      const out = await store.write([{ op: 'event', event: event({ data }) }]);
      const [read] = await store.events({ limit: 1 });
      expect(read?.data).toEqual(data);
      expect(Object.keys(read!.data)).toEqual(Object.keys(data));
      expect(out.ok && out.events[0]?.data).toEqual(data);
      const dropped = await store.write([{ op: 'event', event: event({ data: { kept: 1, gone: undefined } }) }]);
      expect(dropped.ok && dropped.events[0]?.data).toEqual({ kept: 1 });
    });

    it('pages forwards with after and backwards with before, newest first', async () => {
      const { store } = ctx();
      const [e1, e2, e3, e4, e5] = await seed(store);
      expect(await store.events({ after: e2!.id, limit: 10 })).toEqual([e3, e4, e5]);
      expect(await store.events({ after: e2!.id, limit: 2 })).toEqual([e3, e4]);
      expect(await store.events({ before: e4!.id, limit: 10 })).toEqual([e3, e2, e1]);
      expect(await store.events({ before: e4!.id, limit: 2 })).toEqual([e3, e2]);
      expect(await store.events({ order: 'desc', limit: 2 })).toEqual([e5, e4]);
      expect(await store.events({ order: 'asc', limit: 2 })).toEqual([e1, e2]);
      expect(await store.events({ after: e1!.id, before: e5!.id, limit: 10 })).toEqual([e2, e3, e4]);
      expect(await store.events({ after: e1!.id, before: e5!.id, order: 'desc', limit: 10 })).toEqual([e4, e3, e2]);
      expect(await store.events({ after: e5!.id, limit: 10 })).toEqual([]);
      expect(await store.events({ limit: 0 })).toEqual([]);
    });

    it('finds events by any of their accounts, by channel and by types', async () => {
      const { store } = ctx();
      const [e1, e2, e3, e4, e5] = await seed(store);
      expect(await store.events({ account: PAYEE, limit: 10 })).toEqual([e1, e2]);
      expect(await store.events({ account: CAROL, limit: 10 })).toEqual([e2, e4]);
      expect(await store.events({ account: PAYER, limit: 10 })).toEqual([e1, e5]);
      expect(await store.events({ account: PAYER, before: e5!.id, limit: 10 })).toEqual([e1]);
      expect(await store.events({ account: CAROL, order: 'desc', limit: 1 })).toEqual([e4]);
      expect(await store.events({ account: 'GNOBODY', limit: 10 })).toEqual([]);
      expect(await store.events({ channelId: 1n, limit: 10 })).toEqual([e1, e4, e5]);
      expect(await store.events({ channelId: 1n, after: e1!.id, limit: 10 })).toEqual([e4, e5]);
      expect(await store.events({ types: ['x'], limit: 10 })).toEqual([e1, e3]);
      expect(await store.events({ types: ['x', 'z'], order: 'desc', limit: 10 })).toEqual([e4, e3, e1]);
      expect(await store.events({ types: [], limit: 10 })).toEqual([]);
      expect(await store.events({ account: CAROL, channelId: 1n, limit: 10 })).toEqual([e4]);
      expect(await store.events({ account: PAYER, types: ['y'], channelId: 1n, limit: 10 })).toEqual([e5]);
    });

    it('indexes an account named twice in one event once', async () => {
      const { store } = ctx();
      const out = await store.write([{ op: 'event', event: event({ accounts: [PAYER, PAYER] }) }]);
      expect(out.ok && out.events[0]?.accounts).toEqual([PAYER, PAYER]);
      expect(await store.events({ account: PAYER, limit: 10 })).toHaveLength(1);
    });
  });
};
