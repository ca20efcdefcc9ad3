// A buyer's client of the local ledger's HTTP routes (PROTOCOL.md §9): faucet, open, top up and
// close a channel. Transactions are signed here; sequence numbers are read from the ledger.
import { z } from 'zod';
import { signLedgerTx } from '@svc/core';
import type { Keypair } from '@svc/core';

const DEFAULT_TIMEOUT_MS = 15_000;
/** A default channel lifetime: about one day of 5-second ledgers. */
export const DEFAULT_CHANNEL_LEDGERS = 17_280;

const InfoSchema = z.object({
  network: z.string(),
  passphrase: z.string(),
  latestLedger: z.number().int(),
  ledgerSeconds: z.number(),
  contracts: z.object({ channel: z.string(), asset: z.string() }),
  asset: z.object({ code: z.string(), decimals: z.number().int() }),
});
export type LedgerInfoWire = z.infer<typeof InfoSchema>;

const TxSchema = z.object({
  hash: z.string(),
  status: z.enum(['SUCCESS', 'FAILED']),
  ledger: z.number().int(),
  result: z.record(z.string(), z.unknown()).optional(),
  code: z.number().int().optional(),
  message: z.string().optional(),
});
export type TxResultWire = z.infer<typeof TxSchema>;

const AccountSchema = z.object({
  address: z.string(),
  seq: z.number().int(),
  balances: z.array(z.object({ asset: z.string(), amount: z.string() })),
});

const ChannelSchema = z.object({
  id: z.string(),
  payer: z.string(),
  payee: z.string(),
  asset: z.string(),
  deposit: z.string(),
  claimed: z.string(),
  voucherKey: z.string(),
  expiryLedger: z.number().int(),
  open: z.boolean(),
});
export type LedgerChannelWire = z.infer<typeof ChannelSchema>;

export class LedgerError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: number,
    readonly tx?: string,
  ) {
    super(message);
    this.name = 'LedgerError';
  }
}

export class LocalLedgerClient {
  private infoCache: LedgerInfoWire | null = null;

  /** `baseUrl` is the ledger's root, e.g. http://127.0.0.1:4020/ledger. */
  constructor(
    readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async info(): Promise<LedgerInfoWire> {
    const info = InfoSchema.parse(await this.get('/info'));
    this.infoCache = info;
    return info;
  }

  async faucet(address: string, amount?: bigint): Promise<TxResultWire> {
    return this.checked(TxSchema.parse(await this.post('/faucet', { address, ...(amount === undefined ? {} : { amount: amount.toString() }) })));
  }

  async balance(address: string): Promise<bigint> {
    const info = await this.cachedInfo();
    const account = AccountSchema.parse(await this.get(`/accounts/${address}`));
    return BigInt(account.balances.find((b) => b.asset === info.contracts.asset)?.amount ?? '0');
  }

  async channel(id: bigint): Promise<LedgerChannelWire | null> {
    try {
      return ChannelSchema.parse(await this.get(`/channels/${id}`));
    } catch (err) {
      if (err instanceof LedgerError && err.status === 404) return null;
      throw err;
    }
  }

  /** Signs and submits one operation; throws LedgerError when refused or FAILED. */
  async submit(signer: Keypair, op: string, args: Record<string, unknown>): Promise<TxResultWire> {
    const info = await this.cachedInfo();
    const account = AccountSchema.parse(await this.get(`/accounts/${signer.address}`));
    const tx = signLedgerTx(signer, info.passphrase, { source: signer.address, seq: account.seq + 1, op, args });
    return this.checked(TxSchema.parse(await this.post('/tx', tx)));
  }

  async openChannel(o: { payer: Keypair; payee: string; deposit: bigint; voucherKey: Keypair; expiryLedger?: number }): Promise<{ channelId: bigint; tx: string; expiryLedger: number }> {
    const info = await this.info();
    const expiryLedger = o.expiryLedger ?? info.latestLedger + DEFAULT_CHANNEL_LEDGERS;
    const res = await this.submit(o.payer, 'channel.open', { payee: o.payee, deposit: o.deposit.toString(), voucherKey: o.voucherKey.publicKeyHex, expiryLedger });
    return { channelId: BigInt(String(res.result?.['channelId'])), tx: res.hash, expiryLedger };
  }

  async topUp(o: { payer: Keypair; channelId: bigint; amount: bigint; expiryLedger?: number }): Promise<{ deposit: bigint; expiryLedger: number; tx: string }> {
    const res = await this.submit(o.payer, 'channel.top_up', {
      channelId: o.channelId.toString(),
      amount: o.amount.toString(),
      ...(o.expiryLedger === undefined ? {} : { expiryLedger: o.expiryLedger }),
    });
    return { deposit: BigInt(String(res.result?.['deposit'])), expiryLedger: Number(res.result?.['expiryLedger']), tx: res.hash };
  }

  async closeChannel(o: { signer: Keypair; channelId: bigint }): Promise<{ refunded: bigint; tx: string }> {
    const res = await this.submit(o.signer, 'channel.close', { channelId: o.channelId.toString() });
    return { refunded: BigInt(String(res.result?.['refunded'])), tx: res.hash };
  }

  private async cachedInfo(): Promise<LedgerInfoWire> {
    return this.infoCache ?? this.info();
  }

  private checked(res: TxResultWire): TxResultWire {
    if (res.status === 'FAILED') throw new LedgerError(`transaction failed with code ${res.code ?? '?'}${res.message ? `: ${res.message}` : ''}`, 200, res.code, res.hash);
    return res;
  }

  private get(path: string): Promise<unknown> {
    return this.request(path, { method: 'GET' });
  }

  private post(path: string, body: unknown): Promise<unknown> {
    return this.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  private async request(path: string, init: RequestInit): Promise<unknown> {
    const res = await this.fetchImpl(`${this.baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(DEFAULT_TIMEOUT_MS) });
    const json: unknown = await res.json().catch(() => null);
    if (!res.ok) {
      const body = json as { error?: string; message?: string } | null;
      throw new LedgerError(`${init.method} ${path}: ${res.status} ${body?.error ?? ''} ${body?.message ?? ''}`.trim(), res.status);
    }
    return json;
  }
}
