// What every view gets and gives, and the pieces several views share.
import { ApiError, Unreachable } from './api.js';
import type { EventView } from '@svc/core';
import { h } from './dom.js';
import type { Feed } from './feed.js';
import { clockTime } from './format.js';
import type { Asset } from './format.js';
import { addressProblem } from './router.js';
import type { Route } from './router.js';
import { describeEvent } from './sentences.js';
import type { Part, SentenceContext } from './sentences.js';

export interface Context {
  asset: Asset;
  /** The asset's contract address. */
  assetContract: string;
  /** The facilitator's public URL, as it advertises itself in GET /supported. */
  facilitatorUrl: string;
  feed: Feed;
  sentence: SentenceContext;
}

export interface View {
  readonly el: HTMLElement;
  destroy(): void;
}

export type ViewFactory = (ctx: Context, route: Route) => View;

export function renderParts(parts: readonly Part[]): Node[] {
  return parts.map((p) => {
    if (typeof p === 'string') return document.createTextNode(p);
    const attrs = { title: p.title, class: p.mono ? 'mono' : undefined };
    return p.href ? h('a', { ...attrs, href: p.href }, p.text) : h('span', attrs, p.text);
  });
}

/** One event as a list item: time, sentence; data attributes name its type and channel. */
export function eventItem(e: EventView, ctx: Context): HTMLLIElement {
  return h(
    'li',
    {
      class: `event ${e.type.replace(/[^a-z]+/g, '-')}`,
      'data-event': e.type,
      'data-id': e.id,
      'data-channel': e.channelId ?? null,
    },
    h('time', { datetime: e.ts, title: e.ts }, clockTime(e.ts)),
    h('span', { class: 'sentence' }, renderParts(describeEvent(e, ctx.sentence))),
  );
}

/** What went wrong with a request, in words (unreachable is also shown by the banner). */
export function problem(err: unknown): HTMLElement {
  const message =
    err instanceof ApiError
      ? `The facilitator answered ${err.status} ${err.code}: ${err.message}`
      : err instanceof Unreachable
        ? 'The facilitator is unreachable; this part is shown again once it answers.'
        : `Something went wrong: ${err instanceof Error ? err.message : String(err)}`;
  return h('p', { class: 'problem', role: 'status' }, message);
}

/**
 * The one message for an address in the URL that is not one (null when it is, or there is none):
 * the view then asks nothing of the facilitator and draws nothing built on it.
 */
export function badAddress(address: string | null): HTMLElement | null {
  const wrong = address === null ? null : addressProblem(address);
  return wrong ? h('p', { class: 'problem', role: 'alert', 'data-problem': 'address' }, wrong) : null;
}

/** Runs `fn` at most once per `ms` (the last call is never lost). */
export function throttle(fn: () => void, ms: number): { (): void; cancel(): void } {
  let timer: number | null = null;
  let last = 0;
  const run = () => {
    timer = null;
    last = Date.now();
    fn();
  };
  const call = () => {
    if (timer !== null) return;
    timer = window.setTimeout(run, Math.max(0, last + ms - Date.now()));
  };
  call.cancel = () => {
    if (timer !== null) window.clearTimeout(timer);
    timer = null;
  };
  return call;
}
