// svc_price_list: the demo seller's live prices (from configuration, through the meter's own terms)
// and the prices listed in the discovery catalog (each listing's `accepts`, read page by page from
// GET /discovery/resources itself).
import {
  BatchRequirementsSchema,
  DemoPriceSchema,
  DiscoveryResponseSchema,
  PaymentRequirementsSchema,
  zUnit,
  zUnits,
} from '@svc/core';
import { termsFor } from '@svc/meter';
import { z } from 'zod';
import { demoPrices, demoResources } from '../../demo/prices.js';
import type { LocalAnswer, LocalGet } from '../in-process/get.js';
import type { Config } from '../../config.js';
import type { Demo } from '../../demo/demo.js';
import type { SupportedResponse } from '@svc/core';
import type { LedgerInfo } from '@svc/ledger';

/** What this module uses of the domain. */
export interface PriceListDeps {
  config: Config;
  /** The demo seller, world and agent (DEMO on), else null. */
  demo: Demo | null;
  ledgerInfo: LedgerInfo;
  /** The facilitator's public base URL (PUBLIC_URL, or derived from the bound address). */
  publicUrl: () => string;
  supported: () => SupportedResponse;
}

/** Pages of the catalog read for one price list, and the most rows it returns. */
export const CATALOG_PAGE = 100;
export const CATALOG_MAX_ROWS = 1000;

const CatalogPriceSchema = z.object({
  resource: z.string(),
  scheme: z.enum(['channel', 'batch-settlement']).meta({
    description: 'The payment option: svc’s `channel` first, then x402’s `batch-settlement` for the same price.',
  }),
  payTo: z.string(),
  network: z.string(),
  asset: z.string(),
  unit: zUnit,
  amount: zUnits.meta({ description: 'Price of one unit, in base units.' }),
  sliceAmount: zUnits.nullable(),
  minDeposit: zUnits,
  payments: z.number().int(),
});

export const PriceListShape = {
  network: z.string(),
  asset: z.object({ contract: z.string(), code: z.string(), decimals: z.number().int() }),
  demo: z
    .array(
      DemoPriceSchema.extend({
        url: z.string(),
        payTo: z.string(),
        accepts: z.array(z.union([PaymentRequirementsSchema, BatchRequirementsSchema])).meta({
          description:
            'The options of the resource’s 402, as it offers them: svc’s `channel` first, then x402’s `batch-settlement` for the same price.',
        }),
      }),
    )
    .meta({ description: 'The demo seller’s resources (empty when DEMO is off).' }),
  catalog: z.array(CatalogPriceSchema).meta({
    description:
      'Every payment option of the discovery catalog, most paid resources first: for each resource its `channel` option, then its `batch-settlement` one.',
  }),
  catalogTotal: z.number().int().meta({ description: 'Listings in the catalog (the price list stops at 1000 rows).' }),
};
type PriceList = z.infer<z.ZodObject<typeof PriceListShape>>;

/** The price list, or the failing answer of the catalog route. */
export async function priceList(deps: PriceListDeps, get: LocalGet): Promise<PriceList | LocalAnswer> {
  const base = deps.publicUrl();
  const supported = deps.supported();
  const resources = demoResources(deps.config);
  const demo = deps.demo
    ? demoPrices(deps.config, supported).map((p, i) => {
        const payTo = deps.demo!.payTo;
        const terms = termsFor(resources[i]!.options, payTo, supported);
        return {
          ...p,
          url: `${base}${p.path}`,
          payTo,
          accepts: [terms.channel, ...(terms.batch ? [terms.batch] : [])],
        };
      })
    : [];
  const catalog: PriceList['catalog'] = [];
  let total = 0;
  for (let offset = 0; offset < CATALOG_MAX_ROWS; offset += CATALOG_PAGE) {
    const answer = await get('/discovery/resources', { limit: String(CATALOG_PAGE), offset: String(offset) });
    if (answer.status !== 200) return answer;
    const page = DiscoveryResponseSchema.parse(answer.body);
    total = page.pagination.total;
    for (const item of page.items) catalog.push(...pricesOf(item));
    if (page.items.length < CATALOG_PAGE) break;
  }
  const { network, asset, contracts } = deps.ledgerInfo;
  return {
    network,
    asset: { contract: contracts.asset, code: asset.code, decimals: asset.decimals },
    demo,
    catalog: catalog.slice(0, CATALOG_MAX_ROWS),
    catalogTotal: total,
  };
}

/** A listing's options, one row each: a `batch-settlement` option's unit and price are under its extra. */
function pricesOf(item: z.infer<typeof DiscoveryResponseSchema>['items'][number]): PriceList['catalog'] {
  return item.accepts.map((a) => ({
    resource: item.resource,
    scheme: a.scheme,
    payTo: a.payTo,
    network: a.network,
    asset: a.asset,
    unit: a.scheme === 'channel' ? a.unit : a.extra.unit,
    amount: a.scheme === 'channel' ? a.amount : a.extra.unitPrice,
    sliceAmount: a.extra.sliceAmount ?? null,
    minDeposit: a.extra.minDeposit,
    payments: item.payments,
  }));
}
