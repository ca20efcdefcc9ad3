// Fuzzing every JSON body and query of the facilitator over real HTTP: for each entry
// point, FUZZ_RUNS (default 10,000) generated requests from a fixed seed (FUZZ_SEED replays another
// run). Property: never 5xx; a non-2xx is JSON with the docs/protocol.md#errors error body, a known reason
// code and the table's status (a metered demo resource answers a rejected payment 402, as the spec
// has it); no stack trace or file path in any body; /health still answers.
// A failing request is appended to fixtures/<entry>.json, which replay.test.ts runs every time.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { entriesOf, nameOf } from './entries.js';
import { fuzzEntry, healthy, instantiate, loadFixtures, problemsOf, recordFailures, send } from './http-fuzz.js';
import { startWorld } from './world.js';

const TIMEOUT_MS = 300_000;
const EXTRA_ENTRIES = ['POST /mcp', 'POST /ledger/faucet', 'POST /ledger/tx', 'GET /ledger/events'];

const world = await startWorld();
const entries = entriesOf(world);

describe('HTTP fuzz: every JSON body and query', () => {
  afterAll(() => world.close());

  it('covers every route of the table with a body or query schema, and the entry points outside it', () => {
    const expected = world.h.f.routes.filter((r) => r.body !== undefined || r.query !== undefined).map(nameOf);
    expect(expected).toContain('POST /verify');
    expect(entries.map((e) => e.name)).toEqual([...expected, ...EXTRA_ENTRIES]);
  });

  it('replays every kept regression fixture first: each answers without a 5xx and with the error body', async () => {
    const fixtures = loadFixtures();
    expect(fixtures.length).toBeGreaterThan(0);
    const byName = new Map(entries.map((e) => [e.name, e]));
    let cases = 0;
    for (const { file, fixture } of fixtures) {
      const entry = byName.get(fixture.entry);
      expect(entry, `${path.basename(file)} names an entry point that exists`).toBeDefined();
      for (const c of fixture.cases) {
        const request = instantiate(c, world.target.vars);
        const answer = await send(world.target, request);
        expect(problemsOf(request, answer, entry), `${path.basename(file)}: ${c.note}`).toEqual([]);
        cases++;
      }
    }
    console.log(`fuzz fixtures: ${cases} kept cases replayed from ${fixtures.length} files`);
  });

  for (const entry of entries) {
    it(`fuzz ${entry.name}`, { timeout: TIMEOUT_MS }, async () => {
      const result = await fuzzEntry(world.target, entry);
      if (result.failures.length > 0) {
        const file = recordFailures(world.target, entry.name, result.seed, result.failures);
        const first = result.failures[0]!;
        expect.fail(
          `${result.line}\nkept in ${path.relative(process.cwd(), file)}; first: ${first.request.method} ${first.request.path.slice(0, 200)} → ${first.problems.join('; ')}`,
        );
      }
      expect(result.cases).toBeGreaterThan(0);
      expect(await healthy(world.target), 'GET /health answers 200 ok afterwards').toBe(true);
    });
  }
});
