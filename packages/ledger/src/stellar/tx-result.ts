// A Soroban transaction as the port's TxResult: its source and invocation from the envelope, its
// return value, channel contract events and diagnostics from the result meta (TransactionMeta v3,
// protocol 20–22, or v4, protocol 23 on), and for a failure the §7 code.
import { Address, FeeBumpTransaction, TransactionBuilder, xdr } from '@stellar/stellar-sdk';
import type { Transaction } from '@stellar/stellar-sdk';
import { contractFromRaw } from '@svc/core';
import type { LedgerEvent, TxResult } from '../port.js';
import { hostErrorsFromEvents, ledgerCodeOf, pickHostError, refusalMessage } from './contract-errors.js';
import { decodeChannelEvent, decodeReturn, isChannelFunction, opName } from './contract-interface.js';
import type { ChannelFunction } from './contract-interface.js';
import type { RpcTransaction } from '@svc/core';

export interface TxContext {
  passphrase: string;
  channelContract: string;
  asset: string;
}

/** The channel function a transaction invokes, if it invokes one. */
export function channelCall(tx: Transaction, channelContract: string): ChannelFunction | null {
  const op = tx.operations[0];
  if (tx.operations.length !== 1 || op?.type !== 'invokeHostFunction') return null;
  if (op.func.switch() !== xdr.HostFunctionType.hostFunctionTypeInvokeContract()) return null;
  const call = op.func.invokeContract();
  const fn = call.functionName().toString();
  return Address.fromScAddress(call.contractAddress()).toString() === channelContract && isChannelFunction(fn)
    ? fn
    : null;
}

function innerTx(envelopeXdr: string, passphrase: string): Transaction {
  const tx = TransactionBuilder.fromXDR(envelopeXdr, passphrase);
  return tx instanceof FeeBumpTransaction ? tx.innerTransaction : tx;
}

interface MetaParts {
  returnValue: xdr.ScVal | undefined;
  events: xdr.ContractEvent[];
  diagnostics: xdr.DiagnosticEvent[];
}

function metaParts(resultMetaXdr: string | undefined): MetaParts {
  const none: MetaParts = { returnValue: undefined, events: [], diagnostics: [] };
  if (!resultMetaXdr) return none;
  const meta = xdr.TransactionMeta.fromXDR(resultMetaXdr, 'base64');
  switch (meta.switch()) {
    case 3: {
      const soroban = meta.v3().sorobanMeta();
      return soroban
        ? { returnValue: soroban.returnValue(), events: soroban.events(), diagnostics: soroban.diagnosticEvents() }
        : none;
    }
    case 4: {
      const v4 = meta.v4();
      return {
        returnValue: v4.sorobanMeta()?.returnValue() ?? undefined,
        events: v4.operations()[0]?.events() ?? [],
        diagnostics: v4.diagnosticEvents(),
      };
    }
    default:
      return none;
  }
}

/** The id getEvents gives an event: TOID(ledger, application order, operation 0) and its index. */
export function eventId(ledger: number, applicationOrder: number, index: number): string {
  const toid = (BigInt(ledger) << 32n) | (BigInt(applicationOrder) << 12n);
  return `${toid.toString().padStart(19, '0')}-${index.toString().padStart(10, '0')}`;
}

export function isoFromUnix(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** Why a transaction failed, from its TransactionResult: `txFailed (invokeHostFunctionTrapped)`. */
function failureName(resultXdr: string | undefined): string {
  if (!resultXdr) return 'no result';
  const result = xdr.TransactionResult.fromXDR(resultXdr, 'base64').result();
  const ops = result.switch() === xdr.TransactionResultCode.txFailed() ? result.results() : [];
  const inner =
    ops[0]?.switch() === xdr.OperationResultCode.opInner()
      ? ops[0].tr().invokeHostFunctionResult().switch().name
      : undefined;
  return inner ? `${result.switch().name} (${inner})` : result.switch().name;
}

export function txResultOf(
  reply: RpcTransaction & { status: 'SUCCESS' | 'FAILED' },
  hash: string,
  ctx: TxContext,
): TxResult {
  const tx = innerTx(reply.envelopeXdr ?? '', ctx.passphrase);
  const fn = channelCall(tx, ctx.channelContract);
  const meta = metaParts(reply.resultMetaXdr);
  const ledger = reply.ledger ?? 0;
  const order = reply.applicationOrder ?? 0;
  const events: LedgerEvent[] = [];
  meta.events.forEach((event, index) => {
    const contractId = event.contractId();
    if (
      !contractId ||
      contractFromRaw(Uint8Array.from(contractId as unknown as Uint8Array)) !== ctx.channelContract ||
      event.type() !== xdr.ContractEventType.contract()
    )
      return;
    const body = event.body().v0();
    const decoded = decodeChannelEvent(body.topics(), body.data(), ctx.asset);
    const ts = isoFromUnix(reply.createdAt ?? 0);
    if (decoded) events.push({ id: eventId(ledger, order, index), ledger, tx: hash, ts, ...decoded });
  });
  const base = {
    hash,
    ledger,
    source: tx.source,
    op: fn ? opName(fn) : 'stellar.tx',
    ts: isoFromUnix(reply.createdAt ?? 0),
  };
  if (reply.status === 'SUCCESS') {
    const result = fn ? decodeReturn(fn, meta.returnValue) : undefined;
    return { ...base, status: 'SUCCESS', ...(result ? { result } : {}), events };
  }
  const diagnostics = [
    ...(reply.diagnosticEventsXdr ?? []).map((e) => xdr.DiagnosticEvent.fromXDR(e, 'base64')),
    ...meta.diagnostics,
  ];
  const error = pickHostError(hostErrorsFromEvents(diagnostics));
  const code = fn ? ledgerCodeOf(fn, error) : undefined;
  const message =
    fn && error
      ? refusalMessage(fn, error, 'on chain')
      : `the transaction failed on chain: ${failureName(reply.resultXdr)}`;
  return { ...base, status: 'FAILED', ...(code !== undefined ? { code } : {}), message, events: [] };
}
