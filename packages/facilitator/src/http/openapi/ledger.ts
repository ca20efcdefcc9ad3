// The embedded local ledger's routes (docs/protocol.md#the-local-ledger), mounted under /ledger by
// @svc/ledger's Fastify plugin when the ledger runs in-process. Buyers use them (faucet, open a
// channel), so the documents list them — from the ledger's own declarations (LEDGER_ROUTES), the
// schemas its routes parse and answer with.
import { ErrorBodySchema } from '@svc/core';
import { LEDGER_ROUTES } from '@svc/ledger';
import type { LedgerRoute } from '@svc/ledger';
import type { RouteDoc } from './document.js';

export const LEDGER_PREFIX = '/ledger';
const TAGS = ['ledger'];

export function ledgerRouteDocs(routes: readonly LedgerRoute[] = LEDGER_ROUTES): RouteDoc[] {
  return routes.map((route) => {
    // Replies are the wire (input) form of their schemas: amounts as decimal strings.
    const responses: RouteDoc['responses'] = { 200: { description: 'OK', schema: route.reply, io: 'input' } };
    if (route.params || route.query || route.body)
      responses[400] = { description: 'Malformed request', schema: ErrorBodySchema };
    if (route.notFound) responses[404] = { description: route.notFound, schema: ErrorBodySchema };
    return {
      method: route.method,
      url: `${LEDGER_PREFIX}${route.url}`,
      summary: route.summary,
      tags: TAGS,
      params: route.params,
      query: route.query,
      body: route.body,
      responses,
    };
  });
}
