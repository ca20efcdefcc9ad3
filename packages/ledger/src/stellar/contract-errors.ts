// Why the channel contract refused a call, as a docs/protocol.md#channels-and-records code. Soroban reports a failed
// invocation as a host error, `Error(<type>, <code>)`: in a simulation's `error` text, and as an
// `error` diagnostic event (when the node records diagnostics). The contract's own error enum uses
// the numbers 20–27 of §7 (docs/channel-contract.md), so `Error(Contract, #23)` is 23. Two host
// errors stand for §7 codes too: `ed25519_verify` traps (Error(Crypto, …)) on a bad voucher during
// `claim` or `claim_many` — 22 — and a missing or wrong authorisation (Error(Auth, …)) is 26.
import { xdr } from '@stellar/stellar-sdk';
import { LEDGER_CODES } from '@svc/core';
import type { LedgerCode } from '@svc/core';
import type { ChannelFunction } from './contract-interface.js';

/** A Soroban host error: `{ type: 'Contract', code: '23' }`, `{ type: 'Auth', code: 'InvalidAction' }`. */
export interface HostError {
  type: string;
  code: string;
}

const CHANNEL_CODES = new Set<number>([20, 21, 22, 23, 24, 25, 26, 27]);
const ERROR_RE = /Error\((\w+), #?(\w+)\)/;

export function describeHostError(error: HostError): string {
  return `Error(${error.type}, ${error.type === 'Contract' ? '#' : ''}${error.code})`;
}

/** The error that escaped the invocation: the one after `HostError:`, else the first one named. */
export function hostErrorFromText(text: string): HostError | undefined {
  const at = text.indexOf('HostError:');
  const match = ERROR_RE.exec(at >= 0 ? text.slice(at) : text) ?? ERROR_RE.exec(text);
  return match ? { type: match[1]!, code: match[2]! } : undefined;
}

function fromScError(error: xdr.ScError): HostError {
  const type = error.switch().name.replace(/^sce/, '');
  if (error.switch() === xdr.ScErrorType.sceContract()) return { type, code: String(error.contractCode()) };
  return { type, code: error.code().name.replace(/^scec/, '') };
}

/** The errors recorded by `error` diagnostic events, in emission order (innermost first). */
export function hostErrorsFromEvents(events: readonly xdr.DiagnosticEvent[]): HostError[] {
  const out: HostError[] = [];
  for (const event of events) {
    const body = event.event().body().v0();
    const [name, ...rest] = body.topics();
    if (name?.switch() !== xdr.ScValType.scvSymbol() || name.sym().toString() !== 'error') continue;
    const value = rest.find((t) => t.switch() === xdr.ScValType.scvError());
    if (value) out.push(fromScError(value.error()));
  }
  return out;
}

/** Prefers the channel contract's own refusal when several errors were recorded. */
export function pickHostError(errors: readonly HostError[]): HostError | undefined {
  return errors.find((e) => e.type === 'Contract' && CHANNEL_CODES.has(Number(e.code))) ?? errors[0];
}

export function ledgerCodeOf(fn: ChannelFunction, error: HostError | undefined): LedgerCode | undefined {
  if (!error) return undefined;
  if (error.type === 'Contract') {
    const code = Number(error.code);
    return CHANNEL_CODES.has(code) ? (code as LedgerCode) : undefined;
  }
  if (error.type === 'Crypto' && (fn === 'claim' || fn === 'claim_many')) return 22;
  if (error.type === 'Auth') return 26;
  return undefined;
}

/** An English sentence for a refusal: `VOUCHER_NOT_INCREASING: the channel contract refused claim (Error(Contract, #23))`. */
export function refusalMessage(fn: ChannelFunction, error: HostError | undefined, where: string): string {
  const code = ledgerCodeOf(fn, error);
  const name = code === undefined ? 'UNKNOWN' : LEDGER_CODES[code];
  return `${name}: the channel contract refused ${fn} ${where}${error ? ` (${describeHostError(error)})` : ''}`;
}
