// An agent that knows nothing but llms.txt can open a channel and pay. This test is
// that agent: it reads the text, reproduces its test vectors with its own code, and pays, using
// what any agent would have — node:crypto for sha256 and ed25519, the `canonicalize` package for
// RFC 8785 and @stellar/stellar-base's StrKey for addresses — and nothing of svc's.
import crypto from 'node:crypto';
import { StrKey } from '@stellar/stellar-base';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const sha256 = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();

/** An ed25519 key from its 32-byte seed (PKCS #8 wraps the seed after a fixed prefix). */
function keyFromSeed(seed: Buffer) {
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicRaw = crypto.createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  return {
    sign: (bytes: Buffer) => crypto.sign(null, bytes, privateKey).toString('hex'),
    publicHex: publicRaw.toString('hex'),
    address: StrKey.encodeEd25519PublicKey(publicRaw),
  };
}

/** The JSON of the fenced block that follows `heading` in the text. */
function jsonAfter(text: string, heading: string): Record<string, unknown> {
  const from = text.indexOf(heading);
  expect(from, heading).toBeGreaterThanOrEqual(0);
  const block = /```json\n([\s\S]*?)\n```/.exec(text.slice(from));
  return JSON.parse(block![1]!) as Record<string, unknown>;
}

// What the text says, as code.
function txHash(
  passphrase: string,
  body: { source: string; seq: number; op: string; args: Record<string, unknown> },
): Buffer {
  return sha256(Buffer.from('svc:tx:v1'), sha256(Buffer.from(passphrase)), Buffer.from(canonicalize(body)!, 'utf8'));
}

function voucherHash(passphrase: string, channelContract: string, channelId: bigint, cumulative: bigint): Buffer {
  const id = Buffer.alloc(8);
  id.writeBigUInt64BE(channelId);
  const amount = Buffer.alloc(16);
  amount.writeBigUInt64BE(cumulative >> 64n, 0);
  amount.writeBigUInt64BE(cumulative & 0xffff_ffff_ffff_ffffn, 8);
  return sha256(
    Buffer.from('svc:voucher:v1'),
    sha256(Buffer.from(passphrase)),
    StrKey.decodeContract(channelContract),
    id,
    amount,
  );
}

describe('an agent that follows llms.txt alone', () => {
  let h: Harness;
  let text: string;
  beforeAll(async () => {
    h = await startHarness();
    text = await (await fetch(`${h.url}/llms.txt`)).text();
  });
  afterAll(() => h.close());

  it('reproduces the transaction test vector byte for byte', () => {
    const v = jsonAfter(text, 'Test vector (a channel.open') as {
      networkPassphrase: string;
      sourceSecretSeedHex: string;
      payeeSecretSeedHex: string;
      seq: number;
      op: string;
      args: Record<string, unknown>;
      expected: Record<string, string>;
    };
    const source = keyFromSeed(Buffer.from(v.sourceSecretSeedHex, 'hex'));
    const payee = keyFromSeed(Buffer.from(v.payeeSecretSeedHex, 'hex'));
    const body = { source: source.address, seq: v.seq, op: v.op, args: { payee: payee.address, ...v.args } };
    expect(source.address).toBe(v.expected['source']);
    expect(canonicalize(body)).toBe(v.expected['canonicalJson']);
    expect(sha256(Buffer.from(v.networkPassphrase)).toString('hex')).toBe(v.expected['networkIdHex']);
    const hash = txHash(v.networkPassphrase, body);
    expect(hash.toString('hex')).toBe(v.expected['hashHex']);
    expect(source.sign(hash)).toBe(v.expected['signatureHex']);
  });

  it('opens a channel with a transaction it signed itself and pays the demo seller twice', async () => {
    const base = /^- Base URL: (\S+)$/m.exec(text)![1]!;
    const passphrase = /passphrase "([^"]+)"/.exec(text)![1]!;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const me = keyFromSeed(crypto.randomBytes(32));
    const voucherKey = keyFromSeed(crypto.randomBytes(32));
    expect((await post('/ledger/faucet', { address: me.address })).status).toBe(200);

    // The terms.
    const bookUrl = new RegExp(`^- GET (${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/demo/book):`, 'm').exec(
      text,
    )![1]!;
    const terms = (await (await fetch(bookUrl)).json()) as {
      accepts: {
        scheme: string;
        payTo: string;
        amount: string;
        extra: { channelContract: string; minDeposit: string; receiverAuthorizer?: string };
      }[];
    };
    // As the text says: `channel` first (the one this agent pays), then `batch-settlement`, whose
    // channel must be bound to the receiver authorizer the text names.
    expect(text).toContain('every 402 offers `channel` first, then `batch-settlement`');
    expect(terms.accepts.map((a) => a.scheme)).toEqual(['channel', 'batch-settlement']);
    expect(text).toContain('`extra.receiverAuthorizer` of the 402’s batch-settlement option');
    expect(terms.accepts[1]!.extra.receiverAuthorizer).toMatch(/^G[A-Z2-7]{55}$/);
    const accepted = terms.accepts[0]!;

    // The transaction: seq = the account's seq + 1; expiry as the text suggests; the channel id in result.channelId.
    const { seq } = (await (await fetch(`${base}/ledger/accounts/${me.address}`)).json()) as { seq: number };
    const { latestLedger } = (await (await fetch(`${base}/ledger/info`)).json()) as { latestLedger: number };
    const body = {
      source: me.address,
      seq: seq + 1,
      op: 'channel.open',
      args: {
        payee: accepted.payTo,
        deposit: accepted.extra.minDeposit,
        voucherKey: voucherKey.publicHex,
        expiryLedger: latestLedger + Number(/latestLedger \+ (\d+) keeps a channel open/.exec(text)![1]),
      },
    };
    const opened = await post('/ledger/tx', { ...body, signature: me.sign(txHash(passphrase, body)) });
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ status: 'SUCCESS', hash: txHash(passphrase, body).toString('hex') });
    const channelId = BigInt((opened.body['result'] as { channelId: string }).channelId);

    // Two payments: cumulative price, then twice the price.
    for (const n of [1n, 2n]) {
      const cumulative = n * BigInt(accepted.amount);
      const signature = voucherKey.sign(voucherHash(passphrase, accepted.extra.channelContract, channelId, cumulative));
      const header = Buffer.from(
        JSON.stringify({
          x402Version: 2,
          accepted,
          payload: { channelId: channelId.toString(), cumulative: cumulative.toString(), signature },
        }),
      ).toString('base64');
      const res = await fetch(bookUrl, { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(res.status, await res.clone().text()).toBe(200);
      const receipt = JSON.parse(Buffer.from(res.headers.get('payment-response')!, 'base64').toString()) as {
        success: boolean;
        cumulative: string;
      };
      expect(receipt).toMatchObject({ success: true, cumulative: cumulative.toString() });
    }

    // A replayed transaction is refused: its seq is used up.
    const replay = await post('/ledger/tx', { ...body, signature: me.sign(txHash(passphrase, body)) });
    expect(replay.status).toBe(400);
  });
});
