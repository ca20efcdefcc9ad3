// The console reads the facilitator's answers in shapes of its own (src/api.ts), since it may
// depend on @svc/core only. These checks are made by the type checker (`npm run typecheck` covers
// the tests): every answer the facilitator's zod response schemas allow must fit the console's
// shape, so a change on either side that would break the page fails the build.
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { Account, Discovery, DemoInfo, EventView, Float, LedgerPage, Revenue, Stats } from '../src/api.js';
import type { EventViewSchema } from '../../facilitator/src/http/event-view.js';
import type { AccountSchema } from '../../facilitator/src/http/routes/accounts.js';
import type { DemoInfoSchema } from '../../facilitator/src/http/routes/demo-control.js';
import type { DiscoveryResponseSchema } from '../../facilitator/src/http/routes/discovery.js';
import type { FloatSchema } from '../../facilitator/src/http/routes/float.js';
import type { StatsSchema } from '../../facilitator/src/http/routes/meta.js';
import type { RevenueReportSchema } from '../../facilitator/src/http/routes/sellers.js';

type Answer<S extends z.ZodType> = z.output<S>;

describe('the console’s view of the API', () => {
  it('fits every answer the facilitator’s response schemas allow', () => {
    expectTypeOf<Answer<typeof StatsSchema>>().toExtend<Stats>();
    expectTypeOf<Answer<typeof EventViewSchema>>().toExtend<EventView>();
    expectTypeOf<Answer<typeof RevenueReportSchema>>().toExtend<Revenue>();
    expectTypeOf<Answer<typeof AccountSchema>>().toExtend<Account>();
    expectTypeOf<{ events: Answer<typeof EventViewSchema>[]; nextCursor: string | null }>().toExtend<LedgerPage>();
    expectTypeOf<Answer<typeof FloatSchema>>().toExtend<Float>();
    expectTypeOf<Answer<typeof DiscoveryResponseSchema>>().toExtend<Discovery>();
    expectTypeOf<Answer<typeof DemoInfoSchema>>().toExtend<DemoInfo>();
  });
});
