// The Soroban JSON-RPC replies svc reads, declared once as zod schemas (docs/architecture.md#one-source-for-wire-shapes) from the
// documented shapes (developers.stellar.org, Stellar RPC API reference): the SorobanRpc client
// (soroban-rpc.ts) parses with them, for @svc/ledger's StellarLedger and @svc/sdk's StellarChannelClient. XDR
// stays a base64 string here; the callers decode it with the Stellar SDK's types. Unix times come
// as strings from the Go server (`json:",string"`) and as numbers from some proxies: both are
// accepted.
import { z } from 'zod';

const zLedger = z.number().int().nonnegative();
/** A unix time in seconds, as the RPC's string or a number. */
const zUnixSeconds = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^[0-9]{1,15}$/)
    .transform(Number),
]);

export const RpcNetworkSchema = z.object({
  passphrase: z.string(),
  protocolVersion: z.union([z.number(), z.string()]).optional(),
  friendbotUrl: z.string().optional(),
});

export const RpcLatestLedgerSchema = z.object({
  id: z.string(),
  sequence: zLedger,
  protocolVersion: z.union([z.number(), z.string()]).optional(),
});

export const RpcHealthSchema = z.object({
  status: z.string(),
  latestLedger: zLedger,
  oldestLedger: zLedger,
  ledgerRetentionWindow: z.number().int().optional(),
});

export const RpcLedgerEntriesSchema = z.object({
  entries: z
    .array(
      z.object({
        key: z.string(),
        xdr: z.string(),
        lastModifiedLedgerSeq: zLedger.optional(),
        liveUntilLedgerSeq: zLedger.optional(),
      }),
    )
    .nullish()
    .transform((v) => v ?? []),
  latestLedger: zLedger,
});

/** Passed on to the SDK's own parser (rpc.parseRawSimulation), so only its outline is checked. */
export const RpcSimulationSchema = z.looseObject({
  latestLedger: zLedger,
  error: z.string().optional(),
  transactionData: z.string().optional(),
  minResourceFee: z.string().optional(),
  events: z.array(z.string()).optional(),
  results: z.array(z.object({ xdr: z.string(), auth: z.array(z.string()).optional() })).optional(),
  restorePreamble: z.object({ minResourceFee: z.string(), transactionData: z.string() }).optional(),
});

export const RpcSendSchema = z.object({
  status: z.enum(['PENDING', 'DUPLICATE', 'TRY_AGAIN_LATER', 'ERROR']),
  hash: z.string(),
  latestLedger: zLedger,
  latestLedgerCloseTime: zUnixSeconds,
  errorResultXdr: z.string().optional(),
  diagnosticEventsXdr: z.array(z.string()).optional(),
});

export const RpcTransactionSchema = z.object({
  status: z.enum(['SUCCESS', 'FAILED', 'NOT_FOUND']),
  latestLedger: zLedger,
  latestLedgerCloseTime: zUnixSeconds,
  oldestLedger: zLedger.optional(),
  txHash: z.string().optional(),
  ledger: zLedger.optional(),
  createdAt: zUnixSeconds.optional(),
  applicationOrder: z.number().int().optional(),
  feeBump: z.boolean().optional(),
  envelopeXdr: z.string().optional(),
  resultXdr: z.string().optional(),
  resultMetaXdr: z.string().optional(),
  diagnosticEventsXdr: z.array(z.string()).optional(),
  events: z
    .object({
      contractEventsXdr: z.array(z.array(z.string())).optional(),
      transactionEventsXdr: z.array(z.string()).optional(),
    })
    .optional(),
});

export const RpcEventSchema = z.object({
  type: z.string(),
  ledger: zLedger,
  ledgerClosedAt: z.string(),
  contractId: z.string(),
  id: z.string(),
  txHash: z.string(),
  inSuccessfulContractCall: z.boolean().optional(),
  topic: z.array(z.string()).optional(),
  value: z.string(),
});

export const RpcEventsSchema = z.object({
  events: z
    .array(RpcEventSchema)
    .nullish()
    .transform((v) => v ?? []),
  cursor: z.string(),
  latestLedger: zLedger,
  oldestLedger: zLedger.optional(),
});

export type RpcTransaction = z.output<typeof RpcTransactionSchema>;
export type RpcEvent = z.output<typeof RpcEventSchema>;
export type RpcEvents = z.output<typeof RpcEventsSchema>;
export type RpcSimulation = z.output<typeof RpcSimulationSchema>;
export type RpcSend = z.output<typeof RpcSendSchema>;
