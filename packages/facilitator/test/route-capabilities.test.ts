// Each HTTP module names the capabilities it uses in a deps interface of its own; only the wiring
// (http/app.ts and the composition root) sees the domain's whole `Services`. A route module that
// imported it could reach for anything, and its deps would no longer say what it touches.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const WIRING = new Set(['http/app.ts']);

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? files(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

describe('route modules name their capabilities', () => {
  it('no module under http/ or demo/ but the wiring imports Services', () => {
    const offenders = [...files(path.join(SRC, 'http')), ...files(path.join(SRC, 'demo'))]
      .map((f) => path.relative(SRC, f))
      .filter((f) => !WIRING.has(f))
      .filter((f) =>
        /import type \{[^}]*\bServices\b[^}]*\} from '[./]+services\.js'/.test(
          fs.readFileSync(path.join(SRC, f), 'utf8'),
        ),
      );
    expect(offenders).toEqual([]);
  });

  it('every route module exports the interface of what it uses', () => {
    // The route table's modules, and each feature's routes (http/mcp/routes.ts, demo/seller-routes.ts, …).
    const routes = [...files(path.join(SRC, 'http')), ...files(path.join(SRC, 'demo'))]
      .map((f) => path.relative(SRC, f))
      .filter((f) => f.startsWith('http/routes/') || /(^|\/|-)routes\.ts$/.test(f));
    expect(routes.length).toBeGreaterThan(15);
    const without = routes.filter((f) => {
      const text = fs.readFileSync(path.join(SRC, f), 'utf8');
      // A module that takes nothing of the domain (events take the feed; x402-refund a small type) is fine.
      return (
        /export function \w+\((deps|s): /.test(text) &&
        !/export interface \w+Deps\b/.test(text) &&
        !/export type \w+Deps = \{/.test(text)
      );
    });
    expect(without).toEqual([]);
  });
});
