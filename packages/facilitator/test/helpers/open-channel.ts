// A funded payer's channel on a ledger reached over HTTP, and the ChannelSigner that pays through
// it: what every test that plays a buyer needs first.
import { randomKeypair } from '@svc/core';
import type { Keypair, LedgerInfo } from '@svc/core';
import { ChannelSigner } from '@svc/sdk';
import type { LocalLedgerClient } from '@svc/sdk';

export interface OpenedChannel {
  payer: Keypair;
  voucherKey: Keypair;
  channelId: bigint;
  signer: ChannelSigner;
}

/**
 * Funds `payer` (a new one unless given) and opens a channel of `deposit` to `payee` (bound to
 * `receiverAuthorizer` for batch-settlement payments, when given).
 */
export async function openChannel(
  ledger: LocalLedgerClient,
  o: { payee: string; deposit: bigint; payer?: Keypair; expiryLedger?: number; receiverAuthorizer?: string },
): Promise<OpenedChannel> {
  const info = await ledger.info();
  const payer = o.payer ?? randomKeypair();
  const voucherKey = randomKeypair();
  await ledger.faucet(payer.address);
  const { channelId } = await ledger.openChannel({
    payer,
    payee: o.payee,
    deposit: o.deposit,
    voucherKey,
    ...(o.expiryLedger === undefined ? {} : { expiryLedger: o.expiryLedger }),
    ...(o.receiverAuthorizer === undefined ? {} : { receiverAuthorizer: o.receiverAuthorizer }),
  });
  const signer = channelSigner(info, {
    channelId,
    deposit: o.deposit,
    voucherKey,
    payee: o.payee,
    receiverAuthorizer: o.receiverAuthorizer,
  });
  return { payer, voucherKey, channelId, signer };
}

/**
 * The signer of a channel opened on the ledger `info` describes: its vouchers are signed for that
 * ledger's network and channel contract, so a facilitator on the same ledger verifies them.
 */
export function channelSigner(
  info: Pick<LedgerInfo, 'passphrase' | 'network' | 'contracts'>,
  o: { channelId: bigint; deposit: bigint; voucherKey: Keypair; payee: string; receiverAuthorizer?: string },
): ChannelSigner {
  return new ChannelSigner({
    channelId: o.channelId,
    deposit: o.deposit,
    voucherKey: o.voucherKey,
    networkPassphrase: info.passphrase,
    channelContract: info.contracts.channel,
    network: info.network,
    payee: o.payee,
    asset: info.contracts.asset,
    ...(o.receiverAuthorizer === undefined ? {} : { receiverAuthorizer: o.receiverAuthorizer }),
  });
}
