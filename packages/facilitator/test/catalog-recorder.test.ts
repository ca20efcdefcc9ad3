// The catalog recorder against a real SQLite store: payments tallied in memory are written per
// listing and per payer, with the count and the latest terms; self-payments list nothing; a
// listing's payers past the per-flush bound are still counted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import type { PaymentRequirements, Receipt } from '@svc/core';
import { CatalogRecorder } from '../src/domain/catalog-recorder.js';
import type { Listing } from '../src/domain/catalog.js';
import { openStore } from '../src/store/index.js';
import type { Store } from '../src/store/index.js';

const seller = randomKeypair().address;
const listing = (n: number): Listing => ({
  url: 'https://seller.example/answers',
  description: `edition ${n}`,
  mimeType: 'application/json',
  bazaar: {
    info: { input: { type: 'http', method: 'GET' }, output: { type: 'json', mimeType: 'application/json' } },
    schema: { n },
  },
});
const requirements = (amount: string) =>
  ({ scheme: 'channel', payTo: seller, amount, unit: 'request' }) as unknown as PaymentRequirements;
const receipt = (payer: string, second: number, payee = seller) =>
  ({ payer, payee, ts: new Date(Date.UTC(2026, 10, 23, 0, 0, second)).toISOString() }) as Receipt;

describe('CatalogRecorder', () => {
  let dir: string;
  let store: Store;
  const warnings: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-catalog-'));
    store = await openStore({ dataDir: dir });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes each listing once per flush with every payment counted and the latest terms', async () => {
    const recorder = new CatalogRecorder(store, { warn: (_o, msg) => warnings.push(msg) });
    const payers = [randomKeypair().address, randomKeypair().address, randomKeypair().address];
    for (let i = 0; i < 30; i++)
      recorder.record(listing(i), requirements(String(1000 + i)), receipt(payers[i % 3]!, i));
    recorder.record(listing(99), requirements('1'), receipt(seller, 59)); // a self-payment
    expect((await store.listCatalog({ limit: 10, offset: 0 })).total).toBe(0);
    await recorder.flush();
    const { items } = await store.listCatalog({ limit: 10, offset: 0 });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      payTo: seller,
      payments: 30,
      payers: 3,
      description: 'edition 29',
      firstSeen: receipt('', 0).ts,
      lastUpdated: receipt('', 29).ts,
    });
    expect(items[0]!.accepts).toEqual([requirements('1029')]);
    expect(warnings).toEqual([]);
  });

  it('counts the payments of payers past the per-flush bound under a payer already tallied', async () => {
    const recorder = new CatalogRecorder(store, { warn: (_o, msg) => warnings.push(msg) });
    for (let i = 0; i < 1005; i++) recorder.record(listing(i), requirements('5'), receipt(randomKeypair().address, 30));
    await recorder.stop();
    const { items } = await store.listCatalog({ limit: 10, offset: 0 });
    // The store counts distinct payers up to its own cap of 1000 ("at least 1000").
    expect(items[0]).toMatchObject({ payments: 30 + 1005, payers: 1000 });
    expect(recorder.dropped).toBe(0);
  });
});
