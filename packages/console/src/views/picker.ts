// Enter or pick an address: a form that puts the address in the URL, and the addresses the
// facilitator knows of (from its channels, its catalog and the demo) as links.
import { ApiError, get } from '../api.js';
import type { ChannelList, DemoInfo, DiscoveryResponse } from '@svc/core';
import { fill, h } from '../dom.js';
import { shortAddress } from '../format.js';
import { addressProblem, href } from '../router.js';

export type PickerKind = 'seller' | 'account';

export function picker(kind: PickerKind, current: string | null): HTMLElement {
  const input = h('input', {
    name: 'address',
    value: current ?? '',
    placeholder: kind === 'seller' ? 'payTo address (G…)' : 'account address (G… or C…)',
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-label': kind === 'seller' ? 'seller address' : 'account address',
  });
  const hint = h('span', { class: 'bad', role: 'status', 'data-problem': 'address' });
  const known = h('div', { class: 'chips known' });
  const form = h(
    'form',
    {
      class: 'picker',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = input.value.trim();
        const wrong = addressProblem(value);
        hint.textContent = wrong ?? '';
        if (wrong) return;
        window.location.hash = href(kind, value, kind === 'seller' ? { bucket: 'hour' } : undefined);
      },
    },
    input,
    h('button', { type: 'submit' }, 'Show'),
    hint,
  );
  suggestions(kind)
    .then((addresses) => {
      if (addresses.length === 0) return;
      fill(
        known,
        h('span', { class: 'muted' }, 'Known here: '),
        addresses.map((a) =>
          h(
            'a',
            {
              class: `chip${a === current ? ' on' : ''}`,
              href: href(kind, a, kind === 'seller' ? { bucket: 'hour' } : undefined),
              title: a,
            },
            shortAddress(a),
          ),
        ),
      );
    })
    .catch(() => undefined); // no suggestions: the form still works
  return h('div', { class: 'pick' }, form, known);
}

async function suggestions(kind: PickerKind): Promise<string[]> {
  const found = new Set<string>();
  const demo = await demoInfo();
  const { channels } = await get<ChannelList>('/channels');
  if (kind === 'seller') {
    if (demo) found.add(demo.seller);
    const catalog = await get<DiscoveryResponse>('/discovery/resources?limit=200');
    for (const item of catalog.items) found.add(item.payTo);
    for (const c of channels) found.add(c.payee);
  } else {
    if (demo?.world?.account) found.add(demo.world.account);
    for (const c of channels) found.add(c.payer);
    for (const investor of demo?.world?.investors ?? []) found.add(investor);
  }
  return [...found].slice(0, 12);
}

/** GET /demo/info, or null when the demo is off (404). */
async function demoInfo(): Promise<DemoInfo | null> {
  try {
    return await get<DemoInfo>('/demo/info');
  } catch (err) {
    if (err instanceof ApiError) return null;
    throw err;
  }
}
