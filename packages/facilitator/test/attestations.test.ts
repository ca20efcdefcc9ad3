// Attestations: the payee's side attests the response it served, once, within 60 s of the receipt's
// issue, with the token /verify gave it. The attestation that follows a receipt within milliseconds
// takes its issue time from memory instead of reading the receipt back.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SvcError } from '@svc/core';
import { randomBytes } from '@svc/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attestations } from '../src/domain/attestations.js';
import { SqliteStore } from '../src/store/index.js';

describe('attestations', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-attest-'));
  const seed = randomBytes(32);
  const clock = { now: () => Date.parse('2026-11-26T10:00:30.000Z') };
  const receipt = { id: 'ab'.repeat(32), ts: '2026-11-26T10:00:00.000Z' };
  const hash = 'cd'.repeat(32);
  let store: SqliteStore;
  beforeAll(async () => {
    store = await SqliteStore.open({ file: path.join(dir, 'f.sqlite'), writer: 'inline' });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('attests a receipt whose token it just issued without reading the receipt back', async () => {
    const attestations = new Attestations(seed, store, clock);
    const token = attestations.issue(receipt);
    let reads = 0;
    const load = () => ((reads += 1), Promise.resolve(null));
    await expect(attestations.attest(receipt.id, token, hash, load)).resolves.toMatchObject({ responseHash: hash });
    expect(reads).toBe(0);
    expect(await attestations.of(receipt.id)).toMatchObject({ responseHash: hash });
    // Once: the repeat reads the receipt (no longer remembered) and is refused.
    await expect(attestations.attest(receipt.id, token, hash, () => Promise.resolve(receipt))).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('reads a receipt it did not issue (another instance, a restart); 404 for none, 401, 403, 409 late', async () => {
    const other = { id: 'ef'.repeat(32), ts: receipt.ts };
    const issuer = new Attestations(seed, store, clock);
    const token = issuer.tokenFor(other.id);
    const restarted = new Attestations(seed, store, clock);
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'OK',
        (e: SvcError) => e.code,
      );
    expect(await code(restarted.attest('12'.repeat(32), token, hash, () => Promise.resolve(null)))).toBe('NOT_FOUND');
    expect(await code(restarted.attest(other.id, null, hash, () => Promise.resolve(other)))).toBe('UNAUTHORIZED');
    expect(await code(restarted.attest(other.id, '00'.repeat(32), hash, () => Promise.resolve(other)))).toBe(
      'FORBIDDEN',
    );
    const late = new Attestations(seed, store, { now: () => Date.parse(other.ts) + 61_000 });
    expect(await code(late.attest(other.id, token, hash, () => Promise.resolve(other)))).toBe('CONFLICT');
    let reads = 0;
    const load = () => ((reads += 1), Promise.resolve(other));
    expect(await code(restarted.attest(other.id, token, hash, load))).toBe('OK');
    expect(reads).toBe(1);
  });
});
