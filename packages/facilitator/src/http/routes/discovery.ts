// GET /discovery/resources: the catalog of paid resources (spec "Facilitator endpoints"; the rule
// for who may change a listing is in domain/catalog.ts). No registration endpoint: a resource is
// listed once a verified payment for it went through this facilitator.
import { DiscoveryResponseSchema, ErrorBodySchema, zAddress } from '@svc/core';
import { z } from 'zod';
import { zQueryInt } from '../query.js';
import { discoveryItem } from '../../domain/catalog.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import { zPageLimit } from './accounts.js';
import type { Store } from '../../store/port.js';
import type { Keypair } from '@svc/core';

/** What this module uses of the domain. */
export interface DiscoveryDeps {
  store: Store;
  keys: Keypair;
}

export const DISCOVERY_OFFSET_MAX = 1_000_000;

const DiscoveryQuery = z.strictObject(
  {
    payTo: zAddress.optional().meta({ description: 'Only the listings of this seller.' }),
    limit: zPageLimit.meta({ description: 'Listings per page, 1 to 200 (default 50).' }),
    offset: zQueryInt('offset', 0, DISCOVERY_OFFSET_MAX, 0).meta({ description: 'Listings to skip.' }),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown parameter ${issue.keys.join(', ')} (the parameters are payTo, limit and offset)`
        : undefined,
  },
);

export function discoveryRoutes(deps: DiscoveryDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/discovery/resources',
      summary:
        'Resources that received a verified payment, most paid first. A listing is keyed by (resource URL, payTo) and only payments to that payTo from another payer change it. Each listing’s `accepts` offers the `channel` option first, then the same terms as x402 `batch-settlement`.',
      tags: ['discovery'],
      query: DiscoveryQuery,
      responses: {
        200: { description: 'One page of listings', schema: DiscoveryResponseSchema },
        400: { description: 'Bad query', schema: ErrorBodySchema },
      },
      handler: async ({ query }) => {
        const limit = Number(query.limit);
        const offset = Number(query.offset);
        const page = await deps.store.listCatalog({ ...(query.payTo ? { payTo: query.payTo } : {}), limit, offset });
        return {
          x402Version: 2,
          items: page.items.map((entry) => discoveryItem(entry, deps.keys.address)),
          pagination: { limit, offset, total: page.total },
        };
      },
    }),
  ];
}
