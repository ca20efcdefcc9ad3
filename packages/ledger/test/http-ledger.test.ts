import { describe, expect, it } from 'vitest';
import { HttpLedger, LedgerTxRefused, LedgerUnavailable, startLedgerServer } from '../src/index.js';
import { randomKeypair, signLedgerTx } from '@svc/core';
import { PASS, tempDir } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';
import { runLedgerContract } from './ledger-contract.js';

const LEDGER_SECONDS = 5;

runLedgerContract({
  name: 'HttpLedger → Fastify → LocalLedger',
  async create(options = {}) {
    const tmp = tempDir();
    const clock = new FakeClock();
    const server = await startLedgerServer({
      host: '127.0.0.1',
      port: 0,
      dataDir: tmp.dir,
      ledgerSeconds: LEDGER_SECONDS,
      clock,
      ...(options.faucet ? { faucet: options.faucet } : {}),
      ...(options.dexReserves ? { dexReserves: options.dexReserves } : {}),
    });
    return {
      ledger: new HttpLedger({ url: server.url }),
      advance: (ledgers) => clock.advance(ledgers * LEDGER_SECONDS * 1000),
      close: async () => {
        await server.close();
        tmp.remove();
      },
    };
  },
});

describe('HttpLedger failures', () => {
  it('a ledger that does not answer is LedgerUnavailable', async () => {
    const tmp = tempDir();
    const server = await startLedgerServer({ port: 0, dataDir: tmp.dir });
    const url = server.url;
    await server.close();
    tmp.remove();
    const ledger = new HttpLedger({ url, timeoutMs: 2000 });
    await expect(ledger.info()).rejects.toBeInstanceOf(LedgerUnavailable);
    const keys = randomKeypair();
    await expect(
      ledger.submit(signLedgerTx(keys, PASS, { source: keys.address, seq: 1, op: 'transfer', args: {} })),
    ).rejects.toBeInstanceOf(LedgerUnavailable);
  });

  it('a timeout is LedgerUnavailable; a 5xx too; a 400 on submit is LedgerTxRefused', async () => {
    const hang: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error)),
      );
    await expect(
      new HttpLedger({ url: 'http://ledger.invalid/ledger', timeoutMs: 50, fetch: hang }).latestLedger(),
    ).rejects.toBeInstanceOf(LedgerUnavailable);

    const reply =
      (status: number, body: unknown): typeof fetch =>
      () =>
        Promise.resolve(new Response(JSON.stringify(body), { status }));
    const down = new HttpLedger({
      url: 'http://x/ledger',
      fetch: reply(503, { error: 'INTERNAL', source: 'ledger', message: 'down' }),
    });
    await expect(down.getChannel(1n)).rejects.toBeInstanceOf(LedgerUnavailable);
    const garbled = new HttpLedger({ url: 'http://x/ledger', fetch: reply(200, { hello: 'world' }) });
    await expect(garbled.info()).rejects.toThrow(/malformed reply/);
    const refusing = new HttpLedger({
      url: 'http://x/ledger',
      fetch: reply(400, { error: 'BAD_REQUEST', source: 'ledger', message: 'Transaction refused: bad signature.' }),
    });
    const keys = randomKeypair();
    const tx = signLedgerTx(keys, PASS, { source: keys.address, seq: 1, op: 'transfer', args: {} });
    await expect(refusing.submit(tx)).rejects.toThrow(new LedgerTxRefused('Transaction refused: bad signature.'));
    const tooBig = new HttpLedger({
      url: 'http://x/ledger',
      fetch: reply(413, { error: 'BAD_REQUEST', source: 'ledger', message: 'The request body is too large.' }),
    });
    await expect(tooBig.submit(tx)).rejects.toBeInstanceOf(LedgerTxRefused);
  });
});
