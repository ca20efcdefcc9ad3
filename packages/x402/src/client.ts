// The `channel` scheme for @x402/core buyers (`x402Client` + `wrapFetchWithPayment`):
//
//   const client = new x402Client().register('stellar:*', await ChannelSchemeClient.fromFacilitator(url, wallet));
//   const pay = wrapFetchWithPayment(fetch, client);
//
// Bookkeeping: the voucher for `accepted + owed` is signed in createPaymentPayload and confirmed
// (ChannelSigner.confirm) only in the scheme's onPaymentResponse hook, which @x402/fetch fires
// after the paid request with the decoded PAYMENT-RESPONSE (or the 402 terms). A payment refused
// as VOUCHER_NOT_INCREASING (our books were behind: a lost answer, another device) resyncs from
// the facilitator and asks @x402/fetch to retry once with a fresh voucher.
import {
  ChannelPayloadSchema,
  ChannelViewSchema,
  globalFetch,
  owedPerPayment,
  readSupported,
  safeParse,
  SCHEME,
} from '@svc/core';
import type { ChannelPayload } from '@svc/core';
import type { PaymentResponseContext } from '@x402/core/client';
import type {
  Network,
  PaymentPayloadContext,
  PaymentPayloadResult,
  PaymentRequirements as X402Requirements,
  SchemeClientHooks,
  SchemeNetworkClient,
} from '@x402/core/types';
import { assetsFromSupported, findAsset } from './asset.js';
import type { ChannelAsset } from './asset.js';
import { Hold } from './hold.js';
import type { Release } from './hold.js';
import { TermsError, channelTerms } from './requirements.js';
import { channelMismatch } from './signer.js';
import type { ChannelSource, VoucherSigner } from './signer.js';

const DEFAULT_HOLD_MS = 30_000;

export interface ChannelSchemeClientOptions {
  /** Assets the buyer accepts (for @x402/core's spend controls); see `fromFacilitator`. */
  assets?: readonly ChannelAsset[];
  /** The facilitator the buyer trusts, for resyncing a channel; else the terms' `extra.facilitator`. */
  facilitator?: string;
  fetch?: typeof fetch;
  /** How long a channel waits for the answer to its payment in flight before the next one signs. */
  holdTimeoutMs?: number;
}

interface Pending {
  signer: VoucherSigner;
  facilitator: string;
  release: Release;
}

export class ChannelSchemeClient implements SchemeNetworkClient {
  readonly scheme = SCHEME;
  readonly schemeHooks: SchemeClientHooks;
  private readonly assets: readonly ChannelAsset[];
  private readonly doFetch: typeof fetch;
  private readonly holds = new WeakMap<VoucherSigner, Hold>();
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly source: ChannelSource,
    private readonly options: ChannelSchemeClientOptions = {},
  ) {
    this.assets = options.assets ?? [];
    this.doFetch = options.fetch ?? globalFetch;
    this.schemeHooks = { onPaymentResponse: (ctx) => this.onPaymentResponse(ctx) };
  }

  /** A client that accepts the asset of the facilitator at `facilitator` (read from its /supported). */
  static async fromFacilitator(
    facilitator: string,
    source: ChannelSource,
    options: ChannelSchemeClientOptions = {},
  ): Promise<ChannelSchemeClient> {
    const supported = await readSupported(facilitator, options.fetch ? { fetch: options.fetch } : {});
    const assets = [...(options.assets ?? []), ...assetsFromSupported(supported)];
    return new ChannelSchemeClient(source, { ...options, facilitator: options.facilitator ?? facilitator, assets });
  }

  /** @x402/core's spend controls only pay in assets a scheme client recognises here. */
  readonly findDefaultAsset = (asset: string, network: Network): ChannelAsset | undefined =>
    findAsset(this.assets, asset, network);

  async createPaymentPayload(
    x402Version: number,
    requirements: X402Requirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    if (x402Version !== 1 && x402Version !== 2) throw new TermsError(`x402 version ${x402Version} is not supported`);
    const terms = channelTerms(x402Version, requirements);
    const owed = owedPerPayment(terms);
    const cap = context?.maxAmountPerPayment;
    if (cap !== undefined && /^[0-9]+$/.test(cap) && owed > BigInt(cap)) {
      throw new TermsError(`the seller asks ${owed} per payment, above the spend limit of ${cap}`);
    }
    const signer = await this.source.signerFor(terms);
    const mismatch = channelMismatch(signer, terms);
    if (mismatch) throw new TermsError(mismatch);

    if (x402Version === 1) {
      // x402 v1 reports nothing back to the scheme: confirm optimistically (a lost payment shows
      // up as VOUCHER_NOT_INCREASING on a later one).
      const payload = signer.next(owed);
      signer.confirm(BigInt(payload.cumulative));
      const flat: PaymentPayloadResult & { scheme: string; network: string } = {
        x402Version: 1,
        scheme: SCHEME,
        network: terms.network,
        payload,
      };
      return flat;
    }

    let hold = this.holds.get(signer);
    if (!hold) this.holds.set(signer, (hold = new Hold(this.options.holdTimeoutMs ?? DEFAULT_HOLD_MS)));
    const release = await hold.acquire();
    try {
      const payload = signer.next(owed);
      this.pending.set(keyOf(payload), {
        signer,
        release,
        facilitator: this.options.facilitator ?? terms.extra.facilitator,
      });
      return { x402Version: 2, payload };
    } catch (err) {
      release();
      throw err;
    }
  }

  private async onPaymentResponse(ctx: PaymentResponseContext): Promise<void | { recovered: true }> {
    const sent = safeParse(ChannelPayloadSchema, ctx.paymentPayload.payload);
    if (!sent.success) return;
    const key = keyOf(sent.data);
    const pending = this.pending.get(key);
    if (!pending) return;
    this.pending.delete(key);
    try {
      if (ctx.settleResponse?.success === true) {
        pending.signer.confirm(BigInt(sent.data.cumulative));
        return;
      }
      if (ctx.paymentRequired?.error === 'VOUCHER_NOT_INCREASING' && (await this.resync(pending)))
        return { recovered: true };
    } finally {
      pending.release();
    }
  }

  /** Catches up with the facilitator's last accepted cumulative; true when the books moved. */
  private async resync(p: Pending): Promise<boolean> {
    const before = p.signer.cumulative;
    try {
      const res = await this.doFetch(`${p.facilitator.replace(/\/+$/, '')}/channels/${p.signer.channelId}`);
      const view = safeParse(ChannelViewSchema, await res.json());
      if (view.success && view.data.id === p.signer.channelId.toString())
        p.signer.confirm(BigInt(view.data.lastAccepted));
    } catch {
      return false;
    }
    return p.signer.cumulative > before;
  }
}

function keyOf(payload: ChannelPayload): string {
  return `${payload.channelId}:${payload.cumulative}`;
}
