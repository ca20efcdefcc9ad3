// Response attestations (issue: "POST /receipts/:id/attest, once, within 60 s of issue, only by the
// receipt's payee's middleware"). The middleware holds no key of the payee's, so authority is a
// capability: /verify answers its caller — the payee's middleware — with attestToken =
// HMAC-SHA256(a key derived from the facilitator's secret, receipt id), which the middleware never
// forwards to the buyer. Whoever called /verify for a receipt, and only they, can attest it. The
// attestation is kept once, under the key `attest:<receipt id>` of the store's idempotency records.
import crypto from 'node:crypto';
import { SvcError } from '@svc/core';
import type { Receipt } from '@svc/core';
import type { Store } from '../store/port.js';
import type { Clock } from './clock.js';

export const ATTEST_WINDOW_MS = 60_000;
/**
 * Issue times of the receipts whose attest token was given out last, so that the attestation that
 * follows each one within milliseconds need not read its receipt back from the store.
 * Oldest first out; a receipt not here is read from the store.
 */
const RECENT_ISSUES = 10_000;

export interface Attestation {
  responseHash: string;
  at: string;
}

export class Attestations {
  private readonly key: Buffer;
  readonly #issued = new Map<string, string>();

  constructor(
    seed: Uint8Array,
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.key = crypto.createHash('sha256').update('svc:attest:v1').update(seed).digest();
  }

  tokenFor(receiptId: string): string {
    return crypto.createHmac('sha256', this.key).update(receiptId).digest('hex');
  }

  /** The attest token of a receipt given to the payee's side now (its issue time is kept a while). */
  issue(receipt: Pick<Receipt, 'id' | 'ts'>): string {
    if (this.#issued.size >= RECENT_ISSUES) this.#issued.delete(this.#issued.keys().next().value!);
    this.#issued.set(receipt.id, receipt.ts);
    return this.tokenFor(receipt.id);
  }

  /** Attests the response served for receipt `receiptId`; `load` reads the receipt when its issue time is not at hand. */
  async attest(
    receiptId: string,
    token: string | null,
    responseHash: string,
    load: (id: string) => Promise<Pick<Receipt, 'ts'> | null>,
  ): Promise<Attestation> {
    const issuedAt = this.#issued.get(receiptId) ?? (await load(receiptId))?.ts;
    if (issuedAt === undefined) throw new SvcError('NOT_FOUND', `No receipt ${receiptId}.`);
    const expected = Buffer.from(this.tokenFor(receiptId), 'hex');
    const given = token !== null && /^[0-9a-f]{64}$/.test(token) ? Buffer.from(token, 'hex') : null;
    if (!given)
      throw new SvcError(
        'UNAUTHORIZED',
        'Send the attestToken /verify gave the payee’s middleware, as Authorization: Bearer <token>.',
      );
    if (!crypto.timingSafeEqual(given, expected))
      throw new SvcError('FORBIDDEN', 'That token does not attest this receipt.');
    if (this.clock.now() - Date.parse(issuedAt) > ATTEST_WINDOW_MS)
      throw new SvcError('CONFLICT', 'A receipt is attested within 60 s of its issue; this one is older.');
    const at = new Date(this.clock.now()).toISOString();
    const attestation: Attestation = { responseHash, at };
    const result = await this.store.write([
      {
        op: 'idempotency',
        key: keyOf(receiptId),
        fingerprint: responseHash,
        response: JSON.stringify(attestation),
        at,
      },
    ]);
    if (!result.ok) throw new SvcError('CONFLICT', 'This receipt was attested already.');
    this.#issued.delete(receiptId);
    return attestation;
  }

  async of(receiptId: string): Promise<Attestation | null> {
    const record = await this.store.getIdempotent(keyOf(receiptId));
    return record ? (JSON.parse(record.response) as Attestation) : null;
  }
}

function keyOf(receiptId: string): string {
  return `attest:${receiptId}`;
}
