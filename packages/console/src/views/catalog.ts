// Catalog: the discovery listing (GET /discovery/resources): every paid resource with its price
// and unit, its seller, and how often it was paid.
import { get } from '../api.js';
import type { DiscoveryItem, DiscoveryResponse } from '@svc/core';
import { fill, h, section, table } from '../dom.js';
import type { Child } from '../dom.js';
import { amount, count, resourceLabel, shortAddress, time } from '../format.js';
import { href } from '../router.js';
import type { Context, View } from '../view.js';
import { problem, throttle } from '../view.js';

const LIMIT = 200;
const RELOAD_MS = 3000;

export function catalogView(ctx: Context): View {
  const note = h('p', { class: 'muted' }, 'Reading GET /discovery/resources…');
  const list = h('div');
  const el = h(
    'div',
    { class: 'view catalog' },
    section(
      'Catalog',
      h(
        'p',
        null,
        'Resources listed once a verified payment for them went through this facilitator, most paid first. Prices are per unit; streamed resources are paid a slice at a time.',
      ),
      note,
      list,
    ),
  );
  const load = async () => {
    try {
      const d = await get<DiscoveryResponse>(`/discovery/resources?limit=${LIMIT}`);
      note.textContent =
        d.pagination.total > d.items.length
          ? `The ${d.items.length} most paid of ${count(d.pagination.total)} listings.`
          : `${count(d.pagination.total)} listings.`;
      fill(
        list,
        table(
          [
            'resource',
            'price',
            'slice',
            'minimum deposit',
            'seller',
            'paid requests (a stream once)',
            'payers',
            'last paid',
          ],
          d.items.map((i) => row(i, ctx)),
          'Nothing listed yet: a resource is listed after its first verified payment.',
          { 'data-table': 'catalog' },
        ),
      );
    } catch (err) {
      fill(note, problem(err));
    }
  };
  const reload = throttle(() => void load(), RELOAD_MS);
  void load();
  const unsubscribe = ctx.feed.subscribe((added) => {
    if (added.some((e) => e.type === 'voucher.accepted')) reload();
  });
  return {
    el,
    destroy() {
      unsubscribe();
      reload.cancel();
    },
  };
}

/** A listing's `channel` option (its batch-settlement one, second, is the same price). */
type ChannelOption = Extract<DiscoveryItem['accepts'][number], { scheme: 'channel' }>;

function row(item: DiscoveryItem, ctx: Context): Child[] {
  const terms = item.accepts.find((a): a is ChannelOption => a.scheme === 'channel');
  const extra = terms?.extra;
  const slice =
    extra?.sliceSeconds !== undefined
      ? `${extra.sliceSeconds} seconds`
      : extra?.sliceTokens !== undefined
        ? `${extra.sliceTokens} tokens`
        : null;
  return [
    h(
      'div',
      null,
      h('span', { class: 'mono', title: item.resource }, resourceLabel(item.resource)),
      h('small', null, item.description),
      h('small', { class: 'muted' }, item.mimeType),
    ),
    terms
      ? h('span', { 'data-field': 'price' }, `${amount(terms.amount, ctx.asset)} per ${terms.unit}`)
      : h('span', null, '—'),
    slice && extra?.sliceAmount ? `${slice}: ${amount(extra.sliceAmount, ctx.asset)}` : '—',
    extra ? amount(extra.minDeposit, ctx.asset) : '—',
    h(
      'a',
      { class: 'mono', href: href('seller', item.payTo, { bucket: 'hour' }), title: item.payTo },
      shortAddress(item.payTo),
    ),
    count(item.payments),
    count(item.payers),
    time(item.lastUpdated),
  ];
}
