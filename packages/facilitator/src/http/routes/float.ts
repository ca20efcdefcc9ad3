// The credit pool, read-only (spec: "Float endpoints are read-only and submit no transaction"):
// GET /float (summary and sampled history), GET /float/lines/:account, GET /float/positions/:address.
// Everything here is a ledger read; the pool's own moves happen on the ledger (/ledger/pool/*).
import {
  ErrorBodySchema,
  FLOAT_LISTED,
  FloatLineSchema,
  FloatPositionSchema,
  FloatSchema,
  SvcError,
  formatUnits,
  zAddress,
} from '@svc/core';
import type { CreditLine, PoolPosition, PoolState } from '@svc/ledger';
import { z } from 'zod';
import { zQueryInt } from '../query.js';
import { FLOAT_HISTORY_MAX } from '../../domain/float-history.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import type { Config } from '../../config.js';
import type { FloatHistory } from '../../domain/float-history.js';
import type { Ledger, LedgerInfo } from '@svc/ledger';

/** What this module uses of the domain. */
export interface FloatDeps {
  config: Config;
  floatHistory: FloatHistory;
  ledger: Ledger;
  ledgerInfo: LedgerInfo;
}

const TAGS = ['float'];
export const FLOAT_HISTORY_DEFAULT = 200;

const FloatQuery = z.strictObject(
  {
    history: zQueryInt('history', 1, FLOAT_HISTORY_MAX, FLOAT_HISTORY_DEFAULT).meta({
      description: `Samples of history, newest last (1 to ${FLOAT_HISTORY_MAX}, default ${FLOAT_HISTORY_DEFAULT}).`,
      example: '200',
    }),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown parameter ${issue.keys.join(', ')} (the parameter is history)`
        : undefined,
  },
);

export function floatRoutes(deps: FloatDeps): AnyRoute[] {
  const pool = async (): Promise<PoolState> => {
    const state = (await deps.ledger.getPool?.()) ?? null;
    if (!state) throw new SvcError('NOT_FOUND', `The ledger ${deps.ledgerInfo.network} has no credit pool.`);
    return state;
  };
  const noPool = { description: 'The ledger has no credit pool, or no such line', schema: ErrorBodySchema };
  const ledgerDown = { description: 'Ledger unavailable', schema: ErrorBodySchema };
  return [
    defineRoute({
      method: 'GET',
      url: '/float',
      summary: 'The credit pool: size, share price, utilization, lines, investors and a sampled history. Read-only.',
      tags: TAGS,
      query: FloatQuery,
      responses: {
        200: { description: 'The pool', schema: FloatSchema },
        400: { description: 'Bad query', schema: ErrorBodySchema },
        404: noPool,
        503: ledgerDown,
      },
      handler: async ({ query }) => {
        const state = await pool();
        const lines = [...state.lines].sort((a, b) =>
          a.debt === b.debt ? a.account.localeCompare(b.account) : a.debt > b.debt ? -1 : 1,
        );
        const positions = [...state.positions].sort((a, b) =>
          a.shares === b.shares ? a.address.localeCompare(b.address) : a.shares > b.shares ? -1 : 1,
        );
        return {
          pool: {
            address: state.address,
            asset: deps.ledgerInfo.contracts.asset,
            size: formatUnits(state.size),
            idle: formatUnits(state.idle),
            lent: formatUnits(state.lent),
            totalShares: formatUnits(state.totalShares),
            sharePrice: formatUnits(state.sharePrice),
            utilizationBps: state.utilizationBps,
            liquidationThresholdBps: state.liquidationThresholdBps,
            lineCount: state.lines.length,
            investorCount: state.positions.length,
          },
          lines: lines.slice(0, FLOAT_LISTED).map(lineView),
          positions: positions.slice(0, FLOAT_LISTED).map(positionView),
          history: await deps.floatHistory.recent(Number(query.history)),
          sampleSeconds: deps.config.FLOAT_SAMPLE_SECONDS,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/float/lines/:account',
      summary: "A smart account's credit line: debt, value, health (value × 10000 / debt), liquidatable. Read-only.",
      tags: TAGS,
      params: z.object({ account: zAddress }),
      responses: {
        200: { description: 'The line', schema: FloatLineSchema },
        400: { description: 'Not an address', schema: ErrorBodySchema },
        404: noPool,
        503: ledgerDown,
      },
      handler: async ({ params }) => {
        const line = (await pool()).lines.find((l) => l.account === params.account);
        if (!line) throw new SvcError('NOT_FOUND', `${params.account} has no credit line.`);
        return lineView(line);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/float/positions/:address',
      summary: "An investor's shares and their value in the asset (zero for an address that holds none). Read-only.",
      tags: TAGS,
      params: z.object({ address: zAddress }),
      responses: {
        200: { description: 'The position', schema: FloatPositionSchema },
        400: { description: 'Not an address', schema: ErrorBodySchema },
        404: noPool,
        503: ledgerDown,
      },
      handler: async ({ params }) => {
        const position = (await pool()).positions.find((p) => p.address === params.address);
        return positionView(position ?? { address: params.address, shares: 0n, value: 0n });
      },
    }),
  ];
}

function lineView(line: CreditLine) {
  return {
    account: line.account,
    debt: formatUnits(line.debt),
    value: formatUnits(line.value),
    healthBps: line.healthBps,
    liquidatable: line.liquidatable,
    openedAt: line.openedAt,
  };
}

function positionView(position: PoolPosition) {
  return { address: position.address, shares: formatUnits(position.shares), value: formatUnits(position.value) };
}
