// The console's entry: reads the asset from GET /supported, opens the event feed, and shows the
// view the URL names. Everything on the page comes from this facilitator's own HTTP API.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { get } from './api.js';
import type { SupportedResponse } from '@svc/core';
import { connection } from './connection.js';
import { fill, h } from './dom.js';
import { Feed } from './feed.js';
import { parseRoute } from './router.js';
import type { ViewName } from './router.js';
import { EVENT_TYPES } from './sentences.js';
import type { Context, View, ViewFactory } from './view.js';
import { accountView } from './views/account.js';
import { catalogView } from './views/catalog.js';
import { floatView } from './views/float.js';
import { liveView } from './views/live.js';
import { sellerView } from './views/seller.js';

const RETRY_MS = 2000;

const VIEWS: Record<ViewName, { title: string; make: ViewFactory }> = {
  live: { title: 'Live', make: liveView },
  seller: { title: 'Seller', make: sellerView },
  account: { title: 'Account', make: accountView },
  float: { title: 'Float', make: floatView },
  catalog: { title: 'Catalog', make: catalogView },
};

function element(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html has no #${id}`);
  return el;
}

const main = element('view');
const banner = element('banner');
const status = element('status');

/** GET /supported, asked again until the facilitator answers. */
async function supported(): Promise<SupportedResponse> {
  for (;;) {
    try {
      return await get<SupportedResponse>('/supported');
    } catch {
      await new Promise((resolve) => window.setTimeout(resolve, RETRY_MS));
    }
  }
}

function showState(feed: Feed): void {
  const down = connection.state === 'down';
  const state = down ? 'down' : feed.open ? 'live' : 'connecting';
  status.dataset['state'] = state;
  status.textContent = down ? 'unreachable' : feed.open ? 'live' : 'connecting…';
  banner.hidden = !down;
  main.classList.toggle('stale', down);
  if (down)
    banner.textContent = `The facilitator at ${window.location.origin} is unreachable. Nothing on this page is current; it reconnects by itself and reads everything again.`;
}

async function boot(): Promise<void> {
  const feed = new Feed(EVENT_TYPES);
  connection.onChange(() => showState(feed));
  feed.onState(() => showState(feed));
  const kind = (await supported()).kinds.find((k) => k.x402Version === 2);
  if (!kind) {
    fill(main, h('p', { class: 'problem' }, 'GET /supported lists no x402 version 2 kind: nothing to show.'));
    return;
  }
  const ctx: Context = {
    asset: { code: kind.extra.assetCode, decimals: kind.extra.decimals },
    assetContract: kind.extra.asset,
    facilitatorUrl: kind.extra.facilitator,
    feed,
    sentence: { asset: { code: kind.extra.assetCode, decimals: kind.extra.decimals }, assetContract: kind.extra.asset },
  };
  feed.start();

  let current: View | null = null;
  const render = () => {
    const route = parseRoute(window.location.hash);
    const { title, make } = VIEWS[route.view];
    current?.destroy();
    current = make(ctx, route);
    main.replaceChildren(current.el);
    document.title = `${title}${route.address ? ` ${route.address.slice(0, 8)}…` : ''} · svc console`;
    document
      .querySelectorAll<HTMLAnchorElement>('nav a[data-view]')
      .forEach((a) => a.classList.toggle('on', a.dataset['view'] === route.view));
  };
  // Coming back from unreachable: read everything afresh.
  let wasDown = false;
  connection.onChange((state) => {
    if (state === 'down') wasDown = true;
    else if (state === 'up' && wasDown) {
      wasDown = false;
      render();
    }
  });
  window.addEventListener('hashchange', render);
  render();
  showState(feed);
}

void boot();
