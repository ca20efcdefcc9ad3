// What a buyer reads out of Soroban RPC replies (the client is @svc/core's SorobanRpc): an
// account's sequence number, a transaction's return value, the protocol code of a refusal. XDR is
// decoded with the Stellar SDK's types.
import type { SorobanRpc } from '@svc/core';
import { Keypair, xdr } from '@stellar/stellar-sdk';

/** The account's current sequence number, or null when it does not exist. */
export async function accountSequence(rpc: SorobanRpc, address: string): Promise<string | null> {
  const key = xdr.LedgerKey.account(
    new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(address).xdrAccountId() }),
  );
  const entry = (await rpc.getLedgerEntries([key])).entries[0];
  return entry ? xdr.LedgerEntryData.fromXDR(entry.xdr, 'base64').account().seqNum().toString() : null;
}

/** A transaction meta's return value (TransactionMeta v3 or v4). */
export function returnValueOf(resultMetaXdr: string | undefined): xdr.ScVal | undefined {
  if (!resultMetaXdr) return undefined;
  const meta = xdr.TransactionMeta.fromXDR(resultMetaXdr, 'base64');
  if (meta.switch() === 3) return meta.v3().sorobanMeta()?.returnValue() ?? undefined;
  if (meta.switch() === 4) return meta.v4().sorobanMeta()?.returnValue() ?? undefined;
  return undefined;
}

const ERROR_RE = /Error\((\w+), #?(\w+)\)/;
const CHANNEL_CODES = new Set([20, 21, 22, 23, 24, 25, 26, 27]);

/**
 * The docs/protocol.md#channels-and-records code of a refusal: the channel contract's own error numbers are §7's, and a
 * failed authorisation is 26 NOT_AUTHORIZED. `text` is a simulation's error; `events` the
 * diagnostic events of a failed transaction.
 */
export function refusalCode(text: string | undefined, events: readonly string[] = []): number | undefined {
  const fromText = text ? ERROR_RE.exec(text.slice(Math.max(0, text.indexOf('HostError:')))) : null;
  if (fromText) return codeOf(fromText[1]!, fromText[2]!);
  for (const raw of events) {
    const topics = xdr.DiagnosticEvent.fromXDR(raw, 'base64').event().body().v0().topics();
    const error = topics.find((t) => t.switch() === xdr.ScValType.scvError())?.error();
    if (!error) continue;
    const code =
      error.switch() === xdr.ScErrorType.sceContract()
        ? codeOf('Contract', String(error.contractCode()))
        : codeOf(error.switch().name.replace(/^sce/, ''), '');
    if (code !== undefined) return code;
  }
  return undefined;
}

function codeOf(type: string, code: string): number | undefined {
  if (type === 'Contract') return CHANNEL_CODES.has(Number(code)) ? Number(code) : undefined;
  return type === 'Auth' ? 26 : undefined;
}
