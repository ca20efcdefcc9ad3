// POST /v1/report: a buyer reports an on-chain transaction of its own; the facilitator checks it
// against the ledger before publishing anything (spec; issue: chain.rejected with the ledger's code
// for a failed one, dex.swapped for a swap, payment.exact for a plain transfer reported as a
// payment). A repeat is idempotent: the first answer again, nothing published twice.
import {
  ErrorBodySchema,
  EventViewSchema,
  LEDGER_CODES,
  SvcError,
  isAccountAddress,
  publicKeyFromAccount,
  verifyReport,
  zAddress,
  zSignatureHex,
} from '@svc/core';
import type { EventView, LedgerCode } from '@svc/core';
import type { LedgerAccount, TxResult } from '@svc/ledger';
import { z } from 'zod';
import type { NewEvent } from '../../store/port.js';
import { eventView } from '../events/view.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import type { Clock } from '../../domain/clock.js';
import type { EventLog } from '../../domain/event-log.js';
import type { Store } from '../../store/port.js';
import type { Ledger, LedgerInfo } from '@svc/ledger';

/** What this module uses of the domain. */
export interface ReportDeps {
  clock: Clock;
  events: EventLog;
  ledger: Ledger;
  ledgerInfo: LedgerInfo;
  store: Store;
}

const ReportSchema = z
  .object({
    account: zAddress,
    tx: z.string().regex(/^[0-9a-fA-F]{64}$/, 'a transaction hash: 64 hex characters'),
    kind: z.enum(['payment', 'swap']).optional(),
    details: z
      .record(z.string().max(64), z.union([z.string().max(256), z.number(), z.boolean(), z.null()]))
      .refine((d) => Object.keys(d).length <= 16, 'at most 16 details')
      .optional(),
    signature: zSignatureHex.meta({
      description:
        'ed25519 by the transaction’s source (a smart account: its owner or agent key) over sha256("svc:report:v1" ‖ network id ‖ RFC 8785 JSON of { account, tx, kind?, details? }).',
    }),
  })
  .meta({ id: 'Report' });

export function reportRoutes(deps: ReportDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/report',
      costly: true,
      summary: 'Reports an on-chain transaction; it is verified against the ledger before it is published.',
      tags: ['reports'],
      body: ReportSchema,
      responses: {
        200: {
          description: 'Published (or published before: the same event)',
          schema: z.object({ event: EventViewSchema.nullable(), repeated: z.boolean() }),
        },
        400: { description: 'Malformed', schema: ErrorBodySchema },
        403: {
          description: 'The reporter is not the transaction’s source, or the report is not signed by it',
          schema: ErrorBodySchema,
        },
        422: {
          description: 'The transaction could not be verified, or does not match the report',
          schema: ErrorBodySchema,
        },
        503: { description: 'Ledger unavailable', schema: ErrorBodySchema },
      },
      handler: async ({ body }) => {
        const hash = body.tx.toLowerCase();
        const key = `report:${hash}`;
        // Verified first, every time: a repeat is answered only to the transaction's own source.
        const tx = await deps.ledger.getTx(hash);
        if (!tx) throw new SvcError('REPORT_NOT_VERIFIED', `No transaction ${hash} on ${deps.ledgerInfo.network}.`);
        if (tx.source !== body.account)
          throw new SvcError('FORBIDDEN', `Transaction ${hash} was sent by ${tx.source}, not ${body.account}.`);
        // Only the source may report it: a stranger cannot publish someone's transaction with its own words.
        if (!(await signedBySource(deps, body)))
          throw new SvcError(
            'FORBIDDEN',
            `The report is not signed by ${body.account} (or, for a smart account, its owner or agent key).`,
          );
        if (await deps.store.getIdempotent(key))
          return { event: await published(deps, body.account, hash), repeated: true };
        const event = publishable(tx, body.account, body.kind, body.details, new Date(deps.clock.now()).toISOString());
        // The idempotency record makes the publication happen once, even for concurrent copies.
        const result = await deps.events.commit([
          { op: 'idempotency', key, fingerprint: hash, response: event.type, at: event.ts },
          { op: 'event', event },
        ]);
        if (!result.ok) return { event: await published(deps, body.account, hash), repeated: true };
        return { event: eventView(result.events[0]!), repeated: false };
      },
    }),
  ];
}

/** A G… account signs with its own key; a smart account with its owner's or its agent's. */
async function signedBySource(deps: ReportDeps, report: z.output<typeof ReportSchema>): Promise<boolean> {
  const { signature, ...body } = report;
  const keys = isAccountAddress(body.account)
    ? [body.account]
    : smartAccountKeys(await deps.ledger.getAccount(body.account));
  return keys.some((key) => verifyReport(publicKeyFromAccount(key), deps.ledgerInfo.passphrase, body, signature));
}

function smartAccountKeys(account: LedgerAccount): string[] {
  const state = account.account;
  return state ? [state.owner, ...(state.policy ? [state.policy.agentKey] : [])].filter(isAccountAddress) : [];
}

/** The event a report of `hash` published (among the account's recent events). */
async function published(deps: ReportDeps, account: string, hash: string): Promise<EventView | null> {
  const recent = await deps.store.events({
    account,
    types: ['chain.rejected', 'dex.swapped', 'payment.exact'],
    order: 'desc',
    limit: 200,
  });
  const found = recent.find((e) => e.data['tx'] === hash);
  return found ? eventView(found) : null;
}

/** The event a verified transaction publishes, or REPORT_NOT_VERIFIED when the report does not fit it. */
function publishable(
  tx: TxResult,
  account: string,
  kind: 'payment' | 'swap' | undefined,
  details: Record<string, unknown> | undefined,
  ts: string,
): NewEvent {
  const base = { source: 'ledger' as const, ts, accounts: [account] };
  if (tx.status === 'FAILED') {
    const code = tx.code ?? 0;
    return {
      ...base,
      type: 'chain.rejected',
      data: {
        account,
        code,
        codeName: LEDGER_CODES[code as LedgerCode] ?? 'UNKNOWN',
        op: tx.op,
        tx: tx.hash,
        ...(details ? { details } : {}),
      },
    };
  }
  if (tx.op === 'dex.swap' && (kind === undefined || kind === 'swap')) {
    const swap = tx.events.find((e) => e.type === 'dex.swapped')?.data ?? {};
    return {
      ...base,
      type: 'dex.swapped',
      data: {
        account,
        sold: swap['sold'],
        soldAsset: swap['soldAsset'],
        bought: swap['bought'],
        boughtAsset: swap['boughtAsset'],
        tx: tx.hash,
      },
    };
  }
  if (tx.op === 'transfer' && kind === 'payment') {
    const args = tx.events.find((e) => e.type === 'asset.transferred')?.data ?? {};
    const payee = typeof args['to'] === 'string' ? args['to'] : '';
    return {
      ...base,
      accounts: [account, payee],
      type: 'payment.exact',
      data: { payer: account, payee, amount: args['amount'], tx: tx.hash },
    };
  }
  throw new SvcError(
    'REPORT_NOT_VERIFIED',
    `Transaction ${tx.hash} (${tx.op}) is not a ${kind ?? 'reportable'} transaction: report failed transactions, swaps, or transfers with kind "payment".`,
  );
}
