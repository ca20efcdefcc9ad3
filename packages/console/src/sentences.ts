// Every event type of the facilitator (docs/protocol.md#channels-and-records and the demo's own) as a plain sentence.
// One table: its keys are also the event names the page listens for on GET /events.
import { amount, resourceLabel, shortAddress, shortHash, units } from './format.js';
import type { Asset } from './format.js';
import { displayAmount } from '@svc/core';
import type { EventView } from '@svc/core';

/** A piece of a sentence: text, or text that links somewhere in the console. */
export type Part = string | { text: string; href?: string; title?: string; mono?: boolean };

export interface SentenceContext {
  asset: Asset;
  /** The asset's contract, to name it by its code. */
  assetContract: string;
}

type Data = Record<string, unknown>;
type Describe = (d: Data, e: EventView, c: SentenceContext) => Part[];

function text(d: Data, key: string): string | null {
  const v = d[key];
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
}

function account(address: string | null): Part {
  return address
    ? { text: shortAddress(address), href: `#/account/${address}`, title: address, mono: true }
    : 'someone';
}

function seller(address: string | null): Part {
  return address ? { text: shortAddress(address), href: `#/seller/${address}`, title: address, mono: true } : 'someone';
}

function channel(d: Data, e: EventView): string {
  return `channel ${text(d, 'channelId') ?? e.channelId ?? '?'}`;
}

function resource(d: Data): Part {
  const r = text(d, 'resource');
  return r ? { text: resourceLabel(r), title: r, mono: true } : 'a resource';
}

function tx(d: Data): Part[] {
  const hash = text(d, 'tx');
  return hash ? [' (transaction ', { text: shortHash(hash), title: hash, mono: true }, ')'] : [];
}

function money(d: Data, key: string, c: SentenceContext): string {
  return units(d[key]) === null ? 'an unknown amount' : amount(d[key], c.asset);
}

/** An amount of any asset: the console's asset by its code, another by its contract. */
function assetAmount(d: Data, key: string, assetKey: string, c: SentenceContext): string {
  const v = units(d[key]);
  const asset = text(d, assetKey);
  if (v === null) return 'an unknown amount';
  return `${displayAmount(v, c.asset.decimals)} ${asset === c.assetContract ? c.asset.code : `of ${asset ? shortAddress(asset) : 'an unknown asset'}`}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

const SENTENCES: Record<string, Describe> = {
  'voucher.accepted': (d, e, c) => {
    const latency = d['latencyMs'];
    return [
      account(text(d, 'payer')),
      ' paid ',
      money(d, 'delta', c),
      ' to ',
      seller(text(d, 'payee')),
      ' for ',
      resource(d),
      ` on ${channel(d, e)}`,
      typeof latency === 'number' ? ` (verified in ${latency} ms).` : '.',
    ];
  },
  'voucher.rejected': (d, e) =>
    [
      'A voucher',
      text(d, 'channelId') ? ` on ${channel(d, e)}` : '',
      text(d, 'resource') ? [' for ', resource(d)] : [],
      ' was refused: ',
      { text: text(d, 'code') ?? 'unknown reason', mono: true },
      '.',
    ].flat(),
  'channel.opened': (d, e, c) => [
    account(text(d, 'payer')),
    ` opened ${channel(d, e)} to `,
    seller(text(d, 'payee')),
    ' with a deposit of ',
    money(d, 'deposit', c),
    ...tx(d),
    '.',
  ],
  'channel.topped_up': (d, e, c) => [
    `${capital(channel(d, e))} was topped up by `,
    money(d, 'amount', c),
    '; its deposit is now ',
    money(d, 'deposit', c),
    ...tx(d),
    '.',
  ],
  // A cooperative refund (batch-settlement): the unused deposit back to the payer before expiry.
  'channel.refunded': (d, e, c) => [
    `${capital(channel(d, e))} refunded `,
    money(d, 'amount', c),
    ' to its payer; its deposit is now ',
    money(d, 'deposit', c),
    ...tx(d),
    '.',
  ],
  'channel.claimed': (d, e, c) => {
    const covered = d['vouchersCovered'];
    return [
      `${capital(channel(d, e))} settled `,
      money(d, 'amount', c),
      ' to ',
      seller(text(d, 'payee')),
      typeof covered === 'number'
        ? ` in one ledger transaction covering ${plural(covered, 'payment')}`
        : ' in a claim made outside this facilitator',
      ...tx(d),
      '.',
    ];
  },
  'channel.closed': (d, e, c) => [
    `${capital(channel(d, e))} closed; `,
    money(d, 'refunded', c),
    ' went back to the payer',
    ...tx(d),
    '.',
  ],
  'payment.exact': (d, _e, c) => [
    account(text(d, 'payer')),
    ' paid ',
    money(d, 'amount', c),
    ' to ',
    seller(text(d, 'payee')),
    ' in an exact on-chain transfer',
    ...tx(d),
    '.',
  ],
  'chain.rejected': (d) => [
    'The ledger rejected ',
    text(d, 'op') ? { text: text(d, 'op') ?? '', mono: true } : 'a transaction',
    ' from ',
    account(text(d, 'account')),
    ': ',
    { text: text(d, 'codeName') ?? 'unknown', mono: true },
    text(d, 'code') ? ` (code ${text(d, 'code')})` : '',
    ...tx(d),
    '.',
  ],
  'stream.started': (d, e) => [
    'A stream of ',
    resource(d),
    `, paid per ${text(d, 'unit') ?? 'unit'}, started on ${channel(d, e)}.`,
  ],
  'stream.ended': (d, e, c) => {
    const n = d['units'];
    const vouchers = d['vouchers'];
    return [
      'The stream of ',
      resource(d),
      ` on ${channel(d, e)} ended (`,
      { text: text(d, 'reason') ?? 'unknown', mono: true },
      '): ',
      typeof n === 'number' ? `${plural(n, text(d, 'unit') ?? 'unit')}, ` : '',
      money(d, 'charged', c),
      ' charged',
      typeof vouchers === 'number' ? ` in ${plural(vouchers, 'voucher')}` : '',
      '.',
    ];
  },
  'dex.swapped': (d, _e, c) => [
    account(text(d, 'account')),
    ' swapped ',
    assetAmount(d, 'sold', 'soldAsset', c),
    ' for ',
    assetAmount(d, 'bought', 'boughtAsset', c),
    ...tx(d),
    '.',
  ],
  'account.frozen': (d) =>
    d['frozen'] === true
      ? [
          account(text(d, 'account')),
          ' was frozen by its owner: its vouchers are refused until it is unfrozen',
          ...tx(d),
          '.',
        ]
      : [account(text(d, 'account')), ' was unfrozen by its owner', ...tx(d), '.'],
  'demo.agent.started': (d) => ['The demo agent started a run from ', account(text(d, 'account')), '.'],
  'demo.agent.step': (d) => [
    `Demo agent, step “${text(d, 'step') ?? '?'}”: ${text(d, 'status') ?? '?'}`,
    text(d, 'detail') ? ` — ${text(d, 'detail')}` : '',
    '.',
  ],
  'demo.agent.finished': (d, _e, c) => [
    `The demo agent finished its run (${text(d, 'status') ?? '?'}), having paid `,
    money(d, 'paid', c),
    '.',
  ],
};

/** The event names the page listens for. */
export const EVENT_TYPES: readonly string[] = Object.keys(SENTENCES);

export function describeEvent(e: EventView, c: SentenceContext): Part[] {
  const describe = SENTENCES[e.type];
  return describe ? describe(e.data, e, c) : [`An event of type ${e.type} from the ${e.source}.`];
}

/** The sentence as plain text. */
export function sentenceText(parts: readonly Part[]): string {
  return parts.map((p) => (typeof p === 'string' ? p : p.text)).join('');
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
