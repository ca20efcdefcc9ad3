// The facilitator's demo on the wire (spec: GET /demo/info, POST /demo/agent/run): the
// demo seller's live prices, the seeded world and the built-in buyer agent's run, as the
// facilitator's demo routes answer and the console's pickers read them.
//
//   const demo: DemoInfo = await (await fetch('/demo/info')).json();
import { z } from 'zod';
import { zAddress, zUnits } from './schemas.js';

/** What one run of the demo agent does, in order (the facilitator's demo/agent.ts). */
export const AGENT_STEPS = ['channel', 'book', 'ticker', 'chat', 'stopped'] as const;
export type AgentStepName = (typeof AGENT_STEPS)[number];

/** One priced resource of the demo seller, as its 402 asks (also in llms.txt and the MCP price list). */
export const DemoPriceSchema = z
  .object({
    method: z.enum(['GET', 'POST']),
    path: z.string(),
    unit: z.enum(['request', 'second', 'token']),
    price: zUnits.meta({ description: 'Price of one unit, in base units (the 402’s accepts[0].amount).' }),
    slice: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Units paid per voucher (seconds or tokens); null per request.' }),
    sliceAmount: zUnits.nullable().meta({ description: 'price × slice: what one voucher adds; null per request.' }),
    minDeposit: zUnits.meta({ description: 'The smallest channel deposit the seller accepts.' }),
    description: z.string(),
  })
  .meta({ id: 'DemoPrice' });
export type DemoPrice = z.output<typeof DemoPriceSchema>;

export const AgentStepSchema = z.object({
  name: z.enum(AGENT_STEPS),
  status: z.enum(['pending', 'running', 'done', 'failed']),
  detail: z.string(),
  paid: zUnits,
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});
export type AgentStep = z.output<typeof AgentStepSchema>;

export const AgentRunSchema = z
  .object({
    id: z.string(),
    status: z.enum(['running', 'done', 'failed']),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    account: zAddress.nullable().meta({ description: "The agent's smart account." }),
    channelId: z.string().nullable(),
    paid: zUnits,
    steps: z
      .array(AgentStepSchema)
      .meta({ description: 'channel, book, ticker, chat, stopped (the owner freezes the account mid-stream).' }),
  })
  .meta({ id: 'DemoAgentRun' });
export type AgentRun = z.output<typeof AgentRunSchema>;

export const DemoInfoSchema = z
  .object({
    seller: zAddress.meta({ description: "The demo seller's payTo." }),
    resources: z.array(DemoPriceSchema),
    controlKeyRequired: z
      .boolean()
      .meta({ description: 'Whether POST /demo/agent/run and /demo/owner/freeze need the x-demo-key header.' }),
    world: z
      .object({
        ready: z.boolean(),
        account: zAddress.nullable().meta({ description: "The agent's smart account (C…)." }),
        owner: zAddress,
        agentKey: zAddress,
        investors: z.array(zAddress),
      })
      .nullable()
      .meta({ description: 'The seeded demo world; null where the ledger cannot hold one (Stellar).' }),
    agent: z.object({
      available: z.boolean(),
      running: z.boolean(),
      run: AgentRunSchema.nullable().meta({ description: 'The run under way, or the last one.' }),
    }),
  })
  .meta({ id: 'DemoInfo' });
export type DemoInfo = z.output<typeof DemoInfoSchema>;
