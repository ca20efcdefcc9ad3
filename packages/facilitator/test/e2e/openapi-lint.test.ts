// GET /openapi.json as integrators' own tools judge it: Redocly CLI (`redocly lint`,
// its recommended rules) and Spectral (the `spectral:oas` ruleset) report no error. The document is
// the one a running facilitator serves, with the demo seller, its controls under a key, the
// embedded ledger and MCP — every route it can have.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../../../../node_modules/.bin');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-lint-'));
const docFile = path.join(dir, 'openapi.json');

/** Runs a linter that exits non-zero when it finds problems; resolves its stdout either way. */
async function lint(bin: string, args: string[]): Promise<string> {
  const env = { ...process.env, SCARF_ANALYTICS: 'false', REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' };
  try {
    return (await run(path.join(BIN, bin), args, { env, maxBuffer: 32 << 20, timeout: 120_000 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    if (e.stdout) return e.stdout;
    throw new Error(`${bin} failed: ${e.stderr ?? String(err)}`);
  }
}

describe('the OpenAPI document under third-party linters', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ DEMO_CONTROL_KEY: 'a-demo-control-key' });
    fs.writeFileSync(docFile, await (await fetch(`${h.url}/openapi.json`)).text());
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('presents batch-settlement as x402’s standard scheme and channel as the specification’s name for its subset, every endpoint kept', () => {
    const doc = JSON.parse(fs.readFileSync(docFile, 'utf8')) as {
      info: { description: string };
      paths: Record<string, unknown>;
    };
    expect(doc.info.description).toMatch(/x402's standard `batch-settlement` scheme/);
    expect(doc.info.description).toMatch(/`channel`, the svc specification's name for its subset/);
    expect(doc.info.description).toMatch(/offers `channel` first, then `batch-settlement`/);
    // The specification's endpoints stay.
    for (const p of ['/verify', '/settle', '/supported', '/channels/{id}', '/channels/{id}/voucher', '/streams'])
      expect(doc.paths[p]).toBeDefined();
  });

  it('redocly lint: no error (security defined on every operation)', async () => {
    const out = JSON.parse(await lint('redocly', ['lint', docFile, '--format=json'])) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string }[];
    };
    const errors = out.problems.filter((p) => p.severity === 'error');
    console.log(`redocly lint: ${out.totals.errors} errors, ${out.totals.warnings} warnings`);
    expect(errors.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  });

  it('spectral lint (spectral:oas): no error', async () => {
    const ruleset = path.join(dir, '.spectral.yaml');
    fs.writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
    const out = JSON.parse(
      await lint('spectral', ['lint', docFile, '--ruleset', ruleset, '--format', 'json', '--quiet']),
    ) as { code: string; message: string; severity: number; path: string[] }[];
    const errors = out.filter((p) => p.severity === 0);
    console.log(`spectral lint: ${errors.length} errors, ${out.length - errors.length} warnings and hints`);
    expect(errors.map((p) => `${p.code}: ${p.message} at ${p.path.join('.')}`)).toEqual([]);
  });
});
