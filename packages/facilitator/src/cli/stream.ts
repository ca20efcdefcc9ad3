// `svc stream <url> [--post JSON] [--events]`: buys a paid event stream (per token or per second).
// A token stream shows its text as it grows; other streams print each event the moment it arrives
// (--events prints every event of either, payments included). The summary explains the charge,
// which is per started slice. The wallet is the one `svc pay` uses (SVC_WALLET); a stream that
// offers x402's batch-settlement is paid with it, from a channel bound to its receiver authorizer.
import os from 'node:os';
import path from 'node:path';
import { displayAmount } from '@svc/core';
import { PaymentError, Wallet, streamPaid } from '@svc/sdk';
import type { StreamEvent, StreamPaidResult } from '@svc/sdk';
import { explainFetchError, readArgs } from './errors.js';

const USAGE = 'usage: svc stream <http(s) url> [--post JSON] [--events]';

interface Session {
  unit: string;
  slice: number;
  sliceAmount: bigint;
}

export async function streamCommand(args: string[]): Promise<void> {
  const { values, positionals } = readArgs(args, { post: { type: 'string' }, events: { type: 'boolean' } }, 1, USAGE);
  const url = positionals[0];
  if (!url || !/^https?:\/\//.test(url)) throw new Error(USAGE);
  const body = values['post'] as string | undefined;
  if (body !== undefined && !isJson(body))
    throw new Error(
      `--post takes a JSON body, e.g. --post '{"prompt":"hello"}' (got ${JSON.stringify(body.slice(0, 40))})`,
    );
  const file = process.env['SVC_WALLET'] ?? path.join(os.homedir(), '.svc', 'wallet.json');
  const wallet = Wallet.open({ file, log: (line) => console.log(`  ${line}`) });
  const printer = new Printer(Date.now(), values['events'] === true);
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  let run: StreamPaidResult;
  try {
    run = await streamPaid({
      url,
      ...(body !== undefined ? { method: 'POST', body } : {}),
      // A channel bound to the receiver authorizer when the stream offers batch-settlement.
      signer: (terms, options) => wallet.signerFor(terms, 1n, options),
      signal: abort.signal,
      onEvent: (e) => printer.print(e),
    });
  } catch (err) {
    throw hint(explainFetchError(err, url), body !== undefined);
  } finally {
    wallet.save();
  }
  printer.end();
  const e = run.ended;
  console.log(
    `ended: ${e.reason}${e.units !== undefined ? `, ${e.units} ${printer.unitName()}` : ''}; paid ${run.paid} base units (${displayAmount(run.paid)}) in ${run.vouchers} voucher${run.vouchers === 1 ? '' : 's'}`,
  );
  const charge = printer.explainCharge(e.units, e.charged);
  if (charge) console.log(charge);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A stream that answered 404 or 405 to a GET may want a POST with a body. */
function hint(err: Error, posted: boolean): Error {
  const status = err instanceof PaymentError ? err.response?.status : undefined;
  if (posted || (status !== 404 && status !== 405)) return err;
  return new Error(
    `${err.message} — a stream that takes a request body (such as /demo/chat) needs --post JSON, e.g. --post '{"prompt":"hello"}'`,
  );
}

class Printer {
  #session: Session | null = null;
  #inline = false;

  constructor(
    private readonly started: number,
    private readonly everything: boolean,
  ) {}

  print(e: StreamEvent): void {
    const data = e.data as Record<string, unknown> | null;
    if (e.event === 'session' && data)
      this.#session = {
        unit: String(data['unit']),
        slice: Number(data['slice']),
        sliceAmount: BigInt(String(data['sliceAmount'])),
      };
    if (!this.everything && e.event === 'token' && typeof data?.['text'] === 'string') {
      process.stdout.write(data['text']);
      this.#inline = true;
      return;
    }
    if (!this.everything && (e.event === 'payment-required' || e.event === 'done')) return;
    this.end();
    console.log(
      `${((e.at - this.started) / 1000).toFixed(3).padStart(8)}s  ${e.event.padEnd(16)} ${JSON.stringify(e.data)}`,
    );
  }

  /** Ends a line of streamed text. */
  end(): void {
    if (this.#inline) process.stdout.write('\n');
    this.#inline = false;
  }

  unitName(): string {
    return this.#session ? `${this.#session.unit}s` : 'units';
  }

  /** "charged 100 for 85 tokens: the price is per started slice of 10 tokens (9 slices × 10)". */
  explainCharge(units: number | undefined, charged: string | null | undefined): string | null {
    const s = this.#session;
    if (!s || units === undefined || !charged || !Number.isInteger(s.slice) || s.slice < 1) return null;
    const slices = Math.ceil(units / s.slice);
    return `charged ${charged} for ${units} ${s.unit}s: the price is per started slice of ${s.slice} ${s.unit}s (${slices} slices × ${s.sliceAmount})`;
  }
}
