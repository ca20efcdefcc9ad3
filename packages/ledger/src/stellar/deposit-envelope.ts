// A batch-settlement deposit on Stellar: the payer's own signed transaction (a base64
// TransactionEnvelope) that opens its channel or tops it up, which the facilitator submits inside
// a fee-bump transaction (CAP-15) of which it is the fee source — the payer needs no XLM for fees.
// Read strictly before anything is sent (docs/schemes/scheme_batch_settlement_stellar.md "Deposit
// payload"): one InvokeHostFunction operation calling `open` or `top_up` on this ledger's channel
// contract with the documented arguments, the payer as the transaction's source (a G… account),
// authorised with the source account's credentials (so the source's signature is the payer's
// authorisation), Soroban resources from a simulation, bounded in time, and signed by the source —
// checked here with strict ed25519. The facilitator pays its resource fee, so that fee is bounded.
import {
  Address,
  FeeBumpTransaction,
  Keypair as StellarKeypair,
  scValToNative,
  TransactionBuilder,
  xdr,
} from '@stellar/stellar-sdk';
import type { Transaction } from '@stellar/stellar-sdk';
import { isAccountAddress, publicKeyFromAccount, toHex, verifyStrict } from '@svc/core';
import type { Keypair } from '@svc/core';
import type { DepositRead } from '../port.js';

/** The longest deposit transaction taken (base64 characters), as the binding says. */
export const MAX_DEPOSIT_ENVELOPE_CHARS = 16_384;
/**
 * The most a sponsored deposit may cost the facilitator in fees, in stroops (0.5 XLM): an opening
 * costs a small fraction of it; a payer asking for more resources than that is refused, not paid for.
 */
export const MAX_SPONSORED_FEE_STROOPS = 5_000_000n;
/** The smallest inclusion fee per operation on Stellar (stroops). */
const BASE_FEE = 100n;

const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

export interface DepositEnvelope {
  read: Extract<DepositRead, { ok: true }>;
  /** The payer's transaction. */
  inner: Transaction;
  /** The fee-bump that carries it, not yet signed by the sponsor. */
  bump: FeeBumpTransaction;
}

/**
 * The payer's deposit transaction as the port's DepositRead, with the fee-bump that `sponsor`
 * would submit (its hash is the deposit's `transaction`); or why it is not a deposit.
 */
export function readDepositEnvelope(
  transaction: unknown,
  ctx: { passphrase: string; channelContract: string; sponsor: string },
): DepositEnvelope | { ok: false; message: string } {
  const refuse = (message: string) => ({ ok: false as const, message });
  if (typeof transaction !== 'string')
    return refuse('on Stellar, deposit.transaction is the payer’s signed transaction envelope (base64 XDR)');
  if (transaction.length > MAX_DEPOSIT_ENVELOPE_CHARS)
    return refuse(`deposit.transaction is longer than ${MAX_DEPOSIT_ENVELOPE_CHARS} characters`);
  if (!BASE64_RE.test(transaction)) return refuse('deposit.transaction is not base64');
  let parsed: Transaction | FeeBumpTransaction;
  try {
    parsed = TransactionBuilder.fromXDR(transaction, ctx.passphrase);
  } catch {
    return refuse('deposit.transaction is not a Stellar TransactionEnvelope');
  }
  if (parsed instanceof FeeBumpTransaction)
    return refuse('deposit.transaction is a fee-bump: send the payer’s own transaction, the facilitator wraps it');
  const tx = parsed;
  if (tx.toEnvelope().switch() !== xdr.EnvelopeType.envelopeTypeTx())
    return refuse('deposit.transaction is not a v1 transaction envelope');
  const source = tx.source;
  if (!isAccountAddress(source))
    return refuse(`the transaction's source ${String(source).slice(0, 60)} is not a G… account`);
  if (tx.operations.length !== 1)
    return refuse(`the transaction has ${tx.operations.length} operations; a deposit has one`);
  const op = tx.operations[0]!;
  if (op.type !== 'invokeHostFunction') return refuse(`its operation is ${op.type}, not invokeHostFunction`);
  if (op.source !== undefined && op.source !== source)
    return refuse('its operation has a source of its own; the payer is the transaction’s source');
  if (op.func.switch() !== xdr.HostFunctionType.hostFunctionTypeInvokeContract())
    return refuse('its operation does not invoke a contract');
  const invoke = op.func.invokeContract();
  const contract = Address.fromScAddress(invoke.contractAddress()).toString();
  if (contract !== ctx.channelContract)
    return refuse(`it invokes ${contract}, not the channel contract ${ctx.channelContract}`);
  const fn = invoke.functionName().toString();
  const call =
    fn === 'open' ? openArgs(invoke.args(), source) : fn === 'top_up' ? topUpArgs(invoke.args(), source) : null;
  if (call === null) return refuse(`it calls ${JSON.stringify(fn.slice(0, 40))}; a deposit calls open or top_up`);
  if (typeof call === 'string') return refuse(call);
  // The source's signature authorises the payer's require_auth only under source-account credentials.
  const auth = op.auth ?? [];
  if (auth.some((a) => a.credentials().switch() !== xdr.SorobanCredentialsType.sorobanCredentialsSourceAccount()))
    return refuse('its authorization entries must use the source account’s credentials');
  const root = auth.find((a) => sameCall(a.rootInvocation().function(), op.func));
  if (!root) return refuse(`it carries no authorization of the payer for this ${fn} call: simulate it first`);
  if (tx.toEnvelope().v1().tx().ext().switch() !== 1)
    return refuse('it carries no Soroban transaction data: simulate it and assemble the result before signing');
  if (BigInt(tx.fee) > MAX_SPONSORED_FEE_STROOPS)
    return refuse(
      `it offers a fee of ${tx.fee} stroops; a sponsored deposit may cost at most ${MAX_SPONSORED_FEE_STROOPS}`,
    );
  const maxTime = Number(tx.timeBounds?.maxTime ?? 0);
  if (maxTime === 0) return refuse('it has no time bound (maxTime): set a timeout when building it');
  const key = publicKeyFromAccount(source);
  const hash = tx.hash();
  if (!tx.signatures.some((s) => verifyStrict(key, hash, s.signature())))
    return refuse(`it is not signed by its source ${source} for this network`);
  let bump: FeeBumpTransaction;
  try {
    bump = TransactionBuilder.buildFeeBumpTransaction(ctx.sponsor, bumpBaseFee(tx).toString(), tx, ctx.passphrase);
  } catch (err) {
    return refuse(`it cannot be fee-bumped: ${(err as Error).message}`);
  }
  return {
    read: { ok: true, source, op: `channel.${fn}`, args: call, hash: bump.hash().toString('hex') },
    inner: tx,
    bump,
  };
}

/** The fee-bump's rate: the inner transaction's inclusion fee rate, at least the network minimum. */
function bumpBaseFee(tx: Transaction): bigint {
  const resource = BigInt(tx.toEnvelope().v1().tx().ext().sorobanData().resourceFee().toString());
  const inclusion = (BigInt(tx.fee) - resource) / BigInt(tx.operations.length);
  return inclusion > BASE_FEE ? inclusion : BASE_FEE;
}

/** Signs the fee-bump as its fee source. */
export function signBump(bump: FeeBumpTransaction, sponsor: Keypair): FeeBumpTransaction {
  bump.sign(StellarKeypair.fromSecret(sponsor.secret()));
  return bump;
}

function sameCall(a: xdr.SorobanAuthorizedFunction, b: xdr.HostFunction): boolean {
  if (a.switch() !== xdr.SorobanAuthorizedFunctionType.sorobanAuthorizedFunctionTypeContractFn()) return false;
  return a.contractFn().toXDR('base64') === b.invokeContract().toXDR('base64');
}

type Args = Record<string, string | number>;

function address(v: xdr.ScVal | undefined): string | null {
  return v?.switch() === xdr.ScValType.scvAddress() ? Address.fromScAddress(v.address()).toString() : null;
}

function int(v: xdr.ScVal | undefined, type: 'scvI128' | 'scvU64'): string | null {
  return v?.switch().name === type ? (scValToNative(v) as bigint).toString() : null;
}

function u32(v: xdr.ScVal | undefined): number | null {
  return v?.switch() === xdr.ScValType.scvU32() ? v.u32() : null;
}

/** `open(payer, payee, deposit: i128, voucher_key: BytesN<32>, expiry_ledger: u32, receiver_authorizer: Option<Address>)`, as the local ledger's args. */
function openArgs(args: xdr.ScVal[], source: string): Args | string {
  if (args.length !== 6) return `open takes 6 arguments, the transaction passes ${args.length}`;
  const [payerV, payeeV, depositV, keyV, expiryV, authorizerV] = args;
  const payer = address(payerV);
  if (payer !== source) return `open's payer ${payer ?? '(not an address)'} is not the transaction's source ${source}`;
  const payee = address(payeeV);
  const deposit = int(depositV, 'scvI128');
  const key = keyV?.switch() === xdr.ScValType.scvBytes() ? keyV.bytes() : null;
  const expiry = u32(expiryV);
  const authorizer = authorizerV?.switch() === xdr.ScValType.scvVoid() ? undefined : address(authorizerV);
  if (payee === null || deposit === null || key?.length !== 32 || expiry === null || authorizer === null)
    return 'open’s arguments are not (payer, payee, deposit: i128, voucher_key: BytesN<32>, expiry_ledger: u32, receiver_authorizer: Option<Address>)';
  return {
    payee,
    deposit,
    voucherKey: toHex(Uint8Array.from(key)),
    expiryLedger: expiry,
    ...(authorizer === undefined ? {} : { receiverAuthorizer: authorizer }),
  };
}

/** `top_up(payer, channel_id: u64, amount: i128, expiry_ledger: Option<u32>)`, as the local ledger's args. */
function topUpArgs(args: xdr.ScVal[], source: string): Args | string {
  if (args.length !== 4) return `top_up takes 4 arguments, the transaction passes ${args.length}`;
  const [payerV, idV, amountV, expiryV] = args;
  const payer = address(payerV);
  if (payer !== source)
    return `top_up's payer ${payer ?? '(not an address)'} is not the transaction's source ${source}`;
  const channelId = int(idV, 'scvU64');
  const amount = int(amountV, 'scvI128');
  const expiry = expiryV?.switch() === xdr.ScValType.scvVoid() ? undefined : u32(expiryV);
  if (channelId === null || amount === null || expiry === null)
    return 'top_up’s arguments are not (payer, channel_id: u64, amount: i128, expiry_ledger: Option<u32>)';
  return { channelId, amount, ...(expiry === undefined ? {} : { expiryLedger: expiry }) };
}
