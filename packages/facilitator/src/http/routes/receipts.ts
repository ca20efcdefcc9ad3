// Receipts as issued (docs/protocol.md#receipts and #channels-and-records): list, fetch, check, and the payee's attestation of the
// response it served (domain/attestations.ts says who may attest and how that is checked).
import { ErrorBodySchema, ReceiptSchema, SvcError, verifyReceipt, zAddress, zChannelId, zHex32 } from '@svc/core';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../events/cursor.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import { zPageLimit } from './accounts.js';
import type { Attestations } from '../../domain/attestations.js';
import type { Store } from '../../store/port.js';

/** What this module uses of the domain. */
export interface ReceiptDeps {
  attestations: Attestations;
  /** Every signer whose receipts count here: this key's address first, then those a rotation retired. */
  receiptSigners: readonly string[];
  store: Store;
}

const TAGS = ['receipts'];
const IdParams = z.object({ id: zHex32 });
const AttestationSchema = z.object({ responseHash: zHex32, at: z.string() }).nullable();
const errors = {
  400: { description: 'Malformed', schema: ErrorBodySchema },
  404: { description: 'No such receipt', schema: ErrorBodySchema },
};

export function receiptRoutes(deps: ReceiptDeps): AnyRoute[] {
  const find = async (id: string) => {
    const receipt = await deps.store.getReceipt(id);
    if (!receipt) throw new SvcError('NOT_FOUND', `No receipt ${id}.`);
    return receipt;
  };
  return [
    defineRoute({
      method: 'GET',
      url: '/receipts',
      summary: 'Receipts as issued, newest first, cursor-paginated (50 by default, at most 200).',
      tags: TAGS,
      query: z.object({
        payee: zAddress.optional(),
        channelId: zChannelId.optional(),
        cursor: z.string().max(200).optional(),
        limit: zPageLimit,
      }),
      responses: {
        200: {
          description: 'A page of receipts',
          schema: z.object({ receipts: z.array(ReceiptSchema), nextCursor: z.string().nullable() }),
        },
        400: errors[400],
      },
      handler: async ({ query }) => {
        const before = decodeCursor(query.cursor);
        const page = await deps.store.listReceipts({
          limit: Number(query.limit),
          ...(query.payee ? { payee: query.payee } : {}),
          ...(query.channelId ? { channelId: BigInt(query.channelId) } : {}),
          ...(before !== undefined ? { before } : {}),
        });
        const last = page.at(-1);
        return {
          receipts: page.map((r) => r.receipt),
          nextCursor: page.length === Number(query.limit) && last ? encodeCursor(last.position) : null,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/receipts/:id',
      summary: 'A receipt exactly as issued, with its attestation if any.',
      tags: TAGS,
      params: IdParams,
      responses: {
        200: {
          description: 'The receipt',
          schema: z.object({ receipt: ReceiptSchema, attestation: AttestationSchema }),
        },
        ...errors,
      },
      handler: async ({ params }) => ({
        receipt: await find(params.id),
        attestation: await deps.attestations.of(params.id),
      }),
    }),
    defineRoute({
      method: 'GET',
      url: '/receipts/:id/verify',
      summary: "Checks a stored receipt's id and signature, and whether this facilitator signed it.",
      tags: TAGS,
      params: IdParams,
      responses: {
        200: {
          description: 'The check',
          schema: z.object({
            valid: z.boolean(),
            reason: z.string().nullable(),
            signer: z.string(),
            signedByThisFacilitator: z.boolean(),
          }),
        },
        ...errors,
      },
      handler: async ({ params }) => {
        const receipt = await find(params.id);
        const check = verifyReceipt(receipt);
        return {
          valid: check.ok,
          reason: check.ok ? null : check.reason,
          signer: receipt.signer,
          signedByThisFacilitator: deps.receiptSigners.includes(receipt.signer),
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/receipts/:id/attest',
      costly: true,
      summary:
        'The payee’s middleware attests the response it served for a receipt (once, within 60 s; Authorization: Bearer <attestToken from /verify>).',
      tags: TAGS,
      params: IdParams,
      auth: { scheme: 'attestToken' },
      body: z.object({ responseHash: zHex32 }),
      responses: {
        200: { description: 'Attested', schema: z.object({ receiptId: zHex32, responseHash: zHex32, at: z.string() }) },
        ...errors,
        401: { description: 'No token', schema: ErrorBodySchema },
        403: { description: 'Wrong token', schema: ErrorBodySchema },
        409: { description: 'Attested already, or too late', schema: ErrorBodySchema },
      },
      handler: async ({ params, body, request }) => {
        const auth = request.headers.authorization;
        const token = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7).trim() : null;
        const load = (id: string) => deps.store.getReceipt(id);
        const attestation = await deps.attestations.attest(params.id, token, body.responseHash, load);
        return { receiptId: params.id, ...attestation };
      },
    }),
  ];
}
