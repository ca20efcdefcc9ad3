// A replaying Soroban RPC: a `fetch` that answers JSON-RPC requests from a recorded fixture
// (test/fixtures/soroban/*.json) and fails the test when a request differs from the recording or
// when the recording is not used up.
//
//   const replay = SorobanReplay.load('claim-success');
//   const ledger = await StellarLedger.create({ …, fetch: replay.fetch });
//   …
//   replay.assertDone();
//
// `sequence` fixtures are played in order, each exchange once. `table` fixtures answer in any
// order, any number of times, and must each be used at least once by the end.
//
// In a recorded request, values are compared exactly, except:
//   { "$tx": { …fields } }  a base64 TransactionEnvelope, compared by the fields given (see describeTx);
//                           a fee-bump's fields are those of its inner transaction, and `feeBump` its own
//   { "$sameAs": n }        exactly what was sent at the same place of exchange n (0-based)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Address, FeeBumpTransaction, Keypair, scValToNative, TransactionBuilder, xdr } from '@stellar/stellar-sdk';

export const FIXTURES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/soroban');

export type ReplayResponse =
  { result: unknown } | { error: { code: number; message: string } } | { transportError: 'timeout' | 'refused' };

export interface Exchange {
  note?: string;
  request: { method: string; params?: unknown };
  response: ReplayResponse;
}

export interface Fixture {
  description: string;
  mode: 'sequence' | 'table';
  rpcUrl: string;
  passphrase: string;
  exchanges: Exchange[];
}

/** An ScVal as compact JSON: `{ u64: "42" }`, `{ i128: "135000" }`, `{ bytes: "…hex" }`, `{ address: "G…" }`, `{ vec: […] }`, `{ map: { field: … } }`. */
export function describeScVal(v: xdr.ScVal): unknown {
  switch (v.switch().name) {
    case 'scvU64':
    case 'scvI128':
    case 'scvU128':
    case 'scvI64':
      return { [v.switch().name.slice(3).toLowerCase()]: (scValToNative(v) as bigint).toString() };
    case 'scvU32':
      return { u32: v.u32() };
    case 'scvBytes':
      return { bytes: v.bytes().toString('hex') };
    case 'scvAddress':
      return { address: Address.fromScAddress(v.address()).toString() };
    case 'scvVoid':
      return { void: null };
    case 'scvSymbol':
      return { symbol: v.sym().toString() };
    case 'scvBool':
      return { bool: v.b() };
    case 'scvVec':
      return { vec: (v.vec() ?? []).map(describeScVal) };
    case 'scvMap':
      return {
        map: Object.fromEntries(
          (v.map() ?? []).map((e) => [
            e.key().switch().name === 'scvSymbol' ? e.key().sym().toString() : e.key().toXDR('base64'),
            describeScVal(e.val()),
          ]),
        ),
      };
    default:
      return { xdr: v.toXDR('base64') };
  }
}

/** The fields of a transaction envelope a recording may pin. */
export function describeTx(envelope: string, passphrase: string) {
  const parsed = TransactionBuilder.fromXDR(envelope, passphrase);
  const tx = parsed instanceof FeeBumpTransaction ? parsed.innerTransaction : parsed;
  const op = tx.operations[0];
  const invoke =
    op?.type === 'invokeHostFunction' && op.func.switch() === xdr.HostFunctionType.hostFunctionTypeInvokeContract()
      ? {
          contract: Address.fromScAddress(op.func.invokeContract().contractAddress()).toString(),
          function: op.func.invokeContract().functionName().toString(),
          args: op.func.invokeContract().args().map(describeScVal),
        }
      : null;
  const auth =
    op?.type === 'invokeHostFunction'
      ? (op.auth ?? []).map(
          (a) =>
            `${a.credentials().switch().name}:${a.rootInvocation().function().contractFn().functionName().toString()}`,
        )
      : [];
  const bump = parsed instanceof FeeBumpTransaction ? parsed : null;
  return {
    /** A fee-bump's own fields (CAP-15): its hash, fee source, fee, and exactly who signed it. */
    feeBump: bump
      ? {
          hash: bump.hash().toString('hex'),
          feeSource: bump.feeSource,
          fee: bump.fee,
          /** Signed once, by the fee source, over this network's fee-bump hash. */
          signedByFeeSource:
            bump.signatures.length === 1 &&
            bump.signatures.every((s) => Keypair.fromPublicKey(bump.feeSource).verify(bump.hash(), s.signature())),
        }
      : null,
    hash: tx.hash().toString('hex'),
    source: tx.source,
    sequence: tx.sequence,
    fee: tx.fee,
    maxTime: tx.timeBounds?.maxTime ?? null,
    operations: tx.operations.length,
    invoke,
    auth,
    sorobanData: tx.toEnvelope().v1().tx().ext().switch() === 1,
    signers: tx.signatures.length,
    verifies: (address: string) =>
      tx.signatures.some((s) => Keypair.fromPublicKey(address).verify(tx.hash(), s.signature())),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class SorobanReplay {
  readonly fixture: Fixture;
  /** The params actually sent, by exchange index (the last use, in table mode). */
  readonly sent = new Map<number, unknown>();
  readonly failures: string[] = [];
  readonly #used = new Set<number>();
  #next = 0;

  constructor(fixture: Fixture) {
    this.fixture = fixture;
  }

  static load(name: string): SorobanReplay {
    return new SorobanReplay(JSON.parse(fs.readFileSync(path.join(FIXTURES_DIR, `${name}.json`), 'utf8')) as Fixture);
  }

  /** Exchanges used so far. */
  get used(): number {
    return this.#used.size;
  }

  readonly fetch: typeof fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = (JSON.parse(typeof init?.body === 'string' ? init.body : '{}') ?? {}) as {
      jsonrpc?: unknown;
      id?: unknown;
      method?: unknown;
      params?: unknown;
    };
    const problems: string[] = [];
    if (url !== this.fixture.rpcUrl) problems.push(`url ${url} is not ${this.fixture.rpcUrl}`);
    if (init?.method !== 'POST' || body.jsonrpc !== '2.0' || body.id === undefined)
      problems.push('not a JSON-RPC 2.0 POST with an id');
    const index = problems.length ? -1 : this.#find(body.method, body.params, problems);
    if (index < 0) {
      this.failures.push(
        `request ${JSON.stringify(body.method)} ${JSON.stringify(body.params)} does not match the recording: ${problems.join('; ')}`,
      );
      return Promise.reject(new Error(`replay: unexpected request ${String(body.method)}`));
    }
    this.#used.add(index);
    this.sent.set(index, body.params);
    const response = this.fixture.exchanges[index]!.response;
    if ('transportError' in response) {
      return Promise.reject(
        response.transportError === 'timeout'
          ? new DOMException('The operation was aborted due to timeout', 'TimeoutError')
          : new TypeError('fetch failed'),
      );
    }
    const payload =
      'error' in response
        ? { jsonrpc: '2.0', id: body.id, error: response.error }
        : { jsonrpc: '2.0', id: body.id, result: response.result };
    return Promise.resolve(
      new Response(JSON.stringify(payload), { status: 200, headers: { 'content-type': 'application/json' } }),
    );
  };

  /** Fails unless every request matched and every recorded exchange was used. */
  assertDone(): void {
    const unused = this.fixture.exchanges
      .map((e, i) => (this.#used.has(i) ? null : `#${i} ${e.request.method}${e.note ? ` (${e.note})` : ''}`))
      .filter((x) => x !== null);
    const problems = [
      ...this.failures,
      ...(unused.length ? [`recorded exchanges never requested: ${unused.join(', ')}`] : []),
    ];
    if (problems.length) throw new Error(`Soroban replay "${this.fixture.description}":\n  ${problems.join('\n  ')}`);
  }

  #find(method: unknown, params: unknown, problems: string[]): number {
    if (this.fixture.mode === 'sequence') {
      const index = this.#next;
      const expected = this.fixture.exchanges[index];
      if (!expected) {
        problems.push('the recording is used up');
        return -1;
      }
      const why =
        expected.request.method !== method
          ? `method ${String(method)} where #${index} expects ${expected.request.method}`
          : this.#mismatch(expected.request.params, params, 'params');
      if (why) {
        problems.push(`#${index}: ${why}`);
        return -1;
      }
      this.#next++;
      return index;
    }
    const index = this.fixture.exchanges.findIndex(
      (e) => e.request.method === method && this.#mismatch(e.request.params, params, 'params') === null,
    );
    if (index < 0) problems.push('no recorded exchange has this method and params');
    return index;
  }

  /** null when `actual` matches `expected`, else where and how it differs. */
  #mismatch(expected: unknown, actual: unknown, at: string): string | null {
    if (isObject(expected) && '$tx' in expected) return this.#txMismatch(expected['$tx'], actual, at);
    if (isObject(expected) && '$sameAs' in expected) {
      const other = this.sent.get(Number(expected['$sameAs']));
      const value = at
        .split('.')
        .slice(1)
        .reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), other);
      return isDeepStrictEqual(value, actual)
        ? null
        : `${at}: not the same as sent in exchange #${String(expected['$sameAs'])}`;
    }
    if (isObject(expected) && isObject(actual)) {
      const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
      for (const k of keys) {
        const why = this.#mismatch(expected[k], actual[k], `${at}.${k}`);
        if (why) return why;
      }
      return null;
    }
    if (Array.isArray(expected) && Array.isArray(actual)) {
      if (expected.length !== actual.length) return `${at}: ${actual.length} items, recorded ${expected.length}`;
      for (let i = 0; i < expected.length; i++) {
        const why = this.#mismatch(expected[i], actual[i], `${at}[${i}]`);
        if (why) return why;
      }
      return null;
    }
    return isDeepStrictEqual(expected, actual)
      ? null
      : `${at}: ${JSON.stringify(actual)}, recorded ${JSON.stringify(expected)}`;
  }

  #txMismatch(expected: unknown, actual: unknown, at: string): string | null {
    if (typeof actual !== 'string' || !isObject(expected)) return `${at}: not a transaction envelope`;
    let tx: ReturnType<typeof describeTx>;
    try {
      tx = describeTx(actual, this.fixture.passphrase);
    } catch (err) {
      return `${at}: not a transaction envelope (${err instanceof Error ? err.message : String(err)})`;
    }
    for (const [field, want] of Object.entries(expected)) {
      if (field === 'signedBy') {
        const signers = want as string[];
        if (tx.signers !== signers.length || !signers.every((s) => tx.verifies(s)))
          return `${at}: signed by ${tx.signers} key(s), not exactly by ${signers.join(', ')}`;
        continue;
      }
      const got = (tx as Record<string, unknown>)[field];
      if (!isDeepStrictEqual(got, want))
        return `${at}.$tx.${field}: ${JSON.stringify(got)}, recorded ${JSON.stringify(want)}`;
    }
    return null;
  }
}
