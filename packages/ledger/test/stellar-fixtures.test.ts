// The recorded Soroban exchanges themselves: the committed files are what generate.ts produces, and
// the replaying transport fails a test on a request that differs from the recording or on a
// recording not used up.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LedgerUnavailable } from '../src/index.js';
import { buildFixtures, fixtureText } from './fixtures/soroban/generate.js';
import { CLAIM, FACILITATOR, OPENED, PASSPHRASE, RPC_URL, VOUCHER_SIGNATURE } from './fixtures/soroban/scenario.js';
import { FIXTURES_DIR, SorobanReplay } from './helpers/soroban-replay.js';
import { stellarLedger } from './helpers/stellar.js';

describe('recorded Soroban fixtures', () => {
  it('are exactly what generate.ts produces (run it after changing the scenario)', () => {
    const built = buildFixtures();
    const committed = fs
      .readdirSync(FIXTURES_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(committed).toEqual(
      Object.keys(built)
        .map((n) => `${n}.json`)
        .sort(),
    );
    for (const [name, f] of Object.entries(built))
      expect(fs.readFileSync(path.join(FIXTURES_DIR, `${name}.json`), 'utf8'), name).toBe(fixtureText(f));
  });

  it('every exchange asserts a JSON-RPC method and answers with a result, an error or a transport failure', () => {
    for (const [name, f] of Object.entries(buildFixtures())) {
      expect(f.exchanges.length, name).toBeGreaterThan(0);
      for (const e of f.exchanges) {
        expect(e.request.method, name).toMatch(/^get[A-Z]\w+$|^simulateTransaction$|^sendTransaction$/);
        expect(Object.keys(e.response).length, name).toBe(1);
      }
    }
  });
});

describe('the replaying transport', () => {
  it('fails when a request differs from the recording (a different cumulative in the claim)', async () => {
    const r = SorobanReplay.load('claim-success');
    const ledger = await stellarLedger(r);
    await expect(
      ledger.claim(
        { channelId: CLAIM.channelId, cumulative: CLAIM.cumulative + 1n, signature: VOUCHER_SIGNATURE },
        FACILITATOR,
      ),
    ).rejects.toBeInstanceOf(LedgerUnavailable);
    expect(() => r.assertDone()).toThrow(/#2: params\.transaction\.\$tx\.invoke/);
  });

  it('fails when the recording is not used up', async () => {
    const r = SorobanReplay.load('info-testnet');
    await (await stellarLedger(r)).info();
    expect(() => r.assertDone()).toThrow(/never requested: #2 getLatestLedger/);
  });

  it('fails on a method out of order, and in table mode on an entry never used', async () => {
    const r = SorobanReplay.load('get-channel');
    const ledger = await stellarLedger(r);
    await expect(ledger.latestLedger()).rejects.toBeInstanceOf(LedgerUnavailable);
    expect(() => r.assertDone()).toThrow(/method getLatestLedger where #1 expects getLedgerEntries/);
    const table = SorobanReplay.load('read-contract');
    const reader = await stellarLedger(table);
    expect(await reader.getChannel(OPENED.channelId)).not.toBeNull();
    expect(() => table.assertDone()).toThrow(/never requested: .*getLatestLedger/);
  });

  it('fails when a value recorded as $sameAs differs from what was sent before', async () => {
    const notFound = { result: { status: 'NOT_FOUND', latestLedger: 1, latestLedgerCloseTime: '1' } };
    const r = new SorobanReplay({
      description: 'a resend must repeat the first request',
      mode: 'sequence',
      rpcUrl: RPC_URL,
      passphrase: PASSPHRASE,
      exchanges: [
        { request: { method: 'getTransaction', params: { hash: 'aa' } }, response: notFound },
        { request: { method: 'getTransaction', params: { hash: { $sameAs: 0 } } }, response: notFound },
      ],
    });
    const post = (hash: string) =>
      r.fetch(RPC_URL, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTransaction', params: { hash } }),
      });
    expect((await post('aa')).status).toBe(200);
    await expect(post('bb')).rejects.toThrow(/unexpected request/);
    expect(() => r.assertDone()).toThrow(/params\.hash: not the same as sent in exchange #0/);
  });
});
