// Account: an address's record (GET /accounts/:address: policy, today's spend against its caps,
// frozen state, balances, open channels), its credit line and pool position if it has them, and
// its own ledger of events, a page at a time (GET /accounts/:address/ledger).
import { ApiError, get } from '../api.js';
import type { AccountLedgerPage, AccountView, ChannelView, FloatLine, FloatPosition } from '@svc/core';
import { fill, h, section, stat, table } from '../dom.js';
import { amount, count, percent, shortAddress, time, units } from '../format.js';
import { addressProblem, href } from '../router.js';
import type { Route } from '../router.js';
import type { Context, View } from '../view.js';
import { badAddress, eventItem, problem, throttle } from '../view.js';
import { picker } from './picker.js';

const PAGE = 20;
const RELOAD_MS = 1500;

export function accountView(ctx: Context, route: Route): View {
  const address = route.address;
  const el = h('div', { class: 'view account' }, section('Account', picker('account', address), badAddress(address)));
  if (!address || addressProblem(address)) return { el, destroy: () => undefined };

  const head = h(
    'div',
    { class: 'stats', 'data-panel': 'account' },
    h('p', { class: 'muted' }, 'Reading the account…'),
  );
  const policy = h('div', { 'data-panel': 'policy' });
  const credit = h('div', { 'data-panel': 'credit' });
  const channels = h('div');
  const ledger = h('ol', { class: 'feed', 'data-panel': 'ledger' });
  const pager = h('p', { class: 'pager' });
  el.append(
    h('p', { class: 'mono heading-address' }, address),
    head,
    h('div', { class: 'grid two' }, section('Policy and today’s spend', policy), section('Credit', credit)),
    section('Open channels', channels),
    section('Ledger', ledger, pager),
  );

  // Cursors of the pages before this one: [] is the newest page.
  const cursors: string[] = [];
  let cursor: string | null = null;

  const loadLedger = async () => {
    try {
      const page = await get<AccountLedgerPage>(
        `/accounts/${address}/ledger?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      fill(
        ledger,
        page.events.length === 0
          ? h('li', { class: 'muted' }, 'No events for this address.')
          : page.events.map((e) => eventItem(e, ctx)),
      );
      const newer = h(
        'button',
        { type: 'button', disabled: cursors.length === 0 && cursor === null, 'data-action': 'newer' },
        '← Newer',
      );
      const older = h(
        'button',
        { type: 'button', disabled: page.nextCursor === null, 'data-action': 'older' },
        'Older →',
      );
      newer.addEventListener('click', () => {
        cursor = cursors.pop() ?? null;
        void loadLedger();
      });
      older.addEventListener('click', () => {
        cursors.push(cursor ?? '');
        cursor = page.nextCursor;
        void loadLedger();
      });
      fill(pager, newer, ` page ${cursors.length + (cursor === null ? 0 : 1) + 1} `, older);
    } catch (err) {
      fill(ledger, h('li', null, problem(err)));
    }
  };

  const load = async () => {
    try {
      const account = await get<AccountView>(`/accounts/${address}`);
      fill(head, ...headCards(account, ctx));
      fill(policy, policyPanel(account, ctx));
      fill(channels, channelTable(account.channels, ctx));
    } catch (err) {
      fill(head, problem(err));
    }
    fill(credit, await creditPanel(address, ctx));
    if (cursor === null) await loadLedger();
  };
  const reload = throttle(() => void load(), RELOAD_MS);
  void load();
  const unsubscribe = ctx.feed.subscribe((added) => {
    if (added.some((e) => JSON.stringify(e).includes(address))) reload();
  });
  return {
    el,
    destroy() {
      unsubscribe();
      reload.cancel();
    },
  };
}

function headCards(a: AccountView, ctx: Context): HTMLElement[] {
  const state = stat(
    'State',
    a.frozen ? 'Frozen' : 'Not frozen',
    'frozen',
    a.frozen ? 'its vouchers are refused' : a.kind === 'smart' ? 'its agent may spend under the policy' : undefined,
  );
  state.classList.add(a.frozen ? 'bad' : 'good');
  return [
    stat('Kind', a.kind === 'smart' ? 'smart account' : 'account', 'kind'),
    state,
    // Another asset than the console's is named by its code if the facilitator knows it, else by its contract.
    ...a.balances.map((b) =>
      stat('Balance', amount(b.amount, { ...ctx.asset, code: b.code || shortAddress(b.asset) }), 'balance'),
    ),
    stat('Open channels', count(a.channels.length), 'channels'),
  ];
}

/** What the account's open channels have paid: the sum of their last accepted vouchers. */
function paidOnChannels(a: AccountView): bigint {
  return a.channels.reduce((sum, c) => sum + (units(c.lastAccepted) ?? 0n), 0n);
}

function policyPanel(a: AccountView, ctx: Context): HTMLElement {
  const p = a.policy;
  if (!p) return h('p', { class: 'muted' }, 'No spending policy: this is a plain account, spending with its own key.');
  const spent = units(a.spentToday) ?? 0n;
  const cap = units(p.dailyCap) ?? 0n;
  const bps = cap > 0n ? Number((spent * 10000n) / cap) : 0;
  return h(
    'div',
    null,
    h(
      'div',
      { class: 'spend' },
      // The ledger's daily cap counts what the agent key moves out of the account — channel
      // deposits — not what was paid through them: both, named.
      h(
        'p',
        null,
        'Deposited into channels today',
        a.day ? ` (${a.day}, UTC)` : '',
        ': ',
        h('strong', { 'data-field': 'spentToday' }, amount(a.spentToday, ctx.asset)),
        ' of ',
        h('strong', null, amount(p.dailyCap, ctx.asset)),
        ` — ${percent(bps)} of the daily cap, which counts deposits`,
      ),
      h(
        'p',
        null,
        'Paid through its open channels so far: ',
        h('strong', { 'data-field': 'paidOnChannels' }, amount(paidOnChannels(a).toString(), ctx.asset)),
        ' (the accepted vouchers; the rest of each deposit comes back when the channel closes)',
      ),
      h(
        'div',
        { class: 'bar', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': 10000, 'aria-valuenow': bps },
        h('span', { style: `width:${Math.min(100, bps / 100)}%` }),
      ),
    ),
    table(
      ['', ''],
      [
        [
          'Agent key',
          h('span', { class: 'mono', title: p.agentKey, 'data-field': 'agentKey' }, shortAddress(p.agentKey)),
        ],
        ['Per transaction, at most', h('span', { 'data-field': 'perTxCap' }, amount(p.perTxCap, ctx.asset))],
        ['Per day, at most', h('span', { 'data-field': 'dailyCap' }, amount(p.dailyCap, ctx.asset))],
        [
          'May pay',
          p.payees.length === 0
            ? 'anyone'
            : p.payees.map((x) =>
                h('a', { class: 'mono', href: href('seller', x, { bucket: 'hour' }), title: x }, shortAddress(x), ' '),
              ),
        ],
        ['Policy expires at ledger', h('span', { 'data-field': 'policyExpires' }, count(p.expiresLedger))],
      ],
      '',
      { class: 'kv' },
    ),
  );
}

/** The answer, or null when the facilitator says there is none (404). */
async function optional<T>(path: string): Promise<T | null> {
  try {
    return await get<T>(path);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

async function creditPanel(address: string, ctx: Context): Promise<HTMLElement> {
  try {
    const [line, position] = await Promise.all([
      optional<FloatLine>(`/float/lines/${address}`),
      optional<FloatPosition>(`/float/positions/${address}`),
    ]);
    return h(
      'div',
      null,
      line
        ? table(
            ['', ''],
            [
              [
                'Debt to the pool (the line plus its fee, which the pool counts as income when repaid)',
                h('span', { 'data-field': 'debt' }, amount(line.debt, ctx.asset)),
              ],
              ['Holdings, valued', h('span', { 'data-field': 'holdings' }, amount(line.value, ctx.asset))],
              [
                'Health',
                h(
                  'span',
                  { class: line.liquidatable ? 'bad' : 'good', 'data-field': 'health' },
                  `${(line.healthBps / 10000).toFixed(4)} (${count(line.healthBps)} bps)${line.liquidatable ? ' — liquidatable' : ''}`,
                ),
              ],
              ['Opened', h('span', { 'data-field': 'opened' }, time(line.openedAt))],
            ],
            '',
            { class: 'kv', 'data-table': 'line' },
          )
        : h('p', { class: 'muted' }, 'No credit line from the pool.'),
      position && units(position.shares) !== 0n
        ? table(
            ['', ''],
            [
              [
                'Pool shares',
                h('span', { 'data-field': 'shares' }, amount(position.shares, { ...ctx.asset, code: 'shares' })),
              ],
              ['Worth', h('span', { 'data-field': 'worth' }, amount(position.value, ctx.asset))],
            ],
            '',
            { class: 'kv', 'data-table': 'position' },
          )
        : null,
    );
  } catch (err) {
    return problem(err);
  }
}

function channelTable(channels: readonly ChannelView[], ctx: Context): HTMLElement {
  const rows = channels.map((c) => [
    c.id,
    h('a', { class: 'mono', href: href('seller', c.payee, { bucket: 'hour' }), title: c.payee }, shortAddress(c.payee)),
    amount(c.deposit, ctx.asset),
    amount(c.lastAccepted, ctx.asset),
    amount(c.remaining, ctx.asset),
    count(c.vouchers),
    `${count(c.expiresInLedgers)} ledgers`,
  ]);
  return table(
    ['id', 'payee', 'deposit', 'paid', 'remaining', 'vouchers', 'expires in'],
    rows,
    'No open channel from this address.',
    { 'data-table': 'channels' },
  );
}
