// Before the load: read the facilitator's terms and the ledger, make the sellers, open and fund one
// channel per buyer, and make sure every facilitator knows every channel as just opened (which also
// catches a DATABASE_URL holding another ledger's channels under the same ids).
import { SupportedResponseSchema, randomKeypair, voucherContext } from '@svc/core';
import { LocalLedgerClient } from '@svc/sdk';
import { mapLimit, openChannels } from './channels.js';
import { errorCode } from './http.js';
import type { JsonClient } from './http.js';
import { LOAD_PRICE, makeBuyer, makeSeller } from './market.js';
import type { Buyer, Seller, Signing } from './market.js';
import type { LoadOptions } from './options.js';
import type { Target } from './target.js';

const OPEN_PROGRESS_EVERY = 50;

export interface Market {
  ledger: LocalLedgerClient;
  sellers: Seller[];
  buyers: Buyer[];
  signing: Signing;
  /** What every seller asks per request. */
  price: bigint;
}

export async function prepare(target: Target, o: LoadOptions, client: JsonClient): Promise<Market> {
  const reply = await client.get(new URL(`${target.urls[0]!}/supported`));
  const supported = SupportedResponseSchema.parse(reply.body);
  const ledger = new LocalLedgerClient(target.ledgerUrl);
  const info = await ledger.info();
  if (!supported.kinds.some((k) => k.network === info.network))
    throw new Error(`the facilitator does not settle on the ledger's network ${info.network}`);
  const sellers = Array.from({ length: o.sellers }, (_, i) =>
    makeSeller(i, randomKeypair().address, supported, LOAD_PRICE),
  );
  const stranger = makeSeller(o.sellers, randomKeypair().address, supported, LOAD_PRICE);
  const signing: Signing = {
    ctx: voucherContext(info.passphrase, info.contracts.channel),
    forger: randomKeypair(),
    otherSeller: (s) => (sellers.length > 1 ? sellers[(s.index + 1) % sellers.length]! : stranger),
  };
  const t = performance.now();
  const channels = await openChannels(ledger, {
    payees: Array.from({ length: o.buyers }, (_, i) => sellers[i % sellers.length]!.address),
    deposit: o.deposit,
    onOpened: (done, total) => {
      if (done % OPEN_PROGRESS_EVERY === 0 || done === total)
        console.log(`  opened ${done}/${total} channels (${((performance.now() - t) / 1000).toFixed(1)} s)`);
    },
  });
  const buyers = channels.map((c, i) => makeBuyer(c, sellers[i % sellers.length]!));
  await mapLimit(buyers, 16, async (b, i) => {
    const url = target.urls[i % target.urls.length]!;
    const view = await client.get(new URL(`${url}/channels/${b.channel.id}`));
    const body = view.body as { payee?: unknown; lastAccepted?: unknown } | null;
    if (view.status !== 200)
      throw new Error(`${url} does not know channel ${b.channel.id}: ${view.status} ${errorCode(view)}`);
    if (body?.payee !== b.channel.payee || body.lastAccepted !== '0') {
      throw new Error(
        `${url} holds channel ${b.channel.id} with another payee or amounts: its store belongs to another ledger (use an empty DATABASE_URL)`,
      );
    }
  });
  return { ledger, sellers, buyers, signing, price: LOAD_PRICE };
}
