// Dependencies point one way (docs/architecture.md): core ← ledger, meter, sdk, x402 ← facilitator. core does
// no I/O and stays browser-safe (only its Node crypto backend touches node:*). The web console is
// browser code built on @svc/core alone: it reaches the facilitator over HTTP, never by import.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PACKAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const IMPORT_RE = /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sources(pkg: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) out.push(full);
    }
  };
  walk(path.join(PACKAGES, pkg, 'src'));
  return out;
}

function imports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? '');
}

const FORBIDDEN: Record<string, RegExp> = {
  core: /^@svc\//,
  ledger: /^@svc\/(meter|sdk|facilitator)/,
  meter: /^@svc\/(ledger|sdk|facilitator)/,
  sdk: /^@svc\/(ledger|meter|facilitator)/,
  // The bridge to the official x402 packages: core and @x402/* only, no other svc package.
  x402: /^@svc\/(?!core$)|\.\.\/\.\.\/(ledger|meter|sdk|facilitator|console)\//,
  // Any @svc package but core, or another package's sources by a relative path.
  console: /^@svc\/(?!core$)|\.\.\/(core|ledger|meter|sdk|x402|facilitator)\//,
};

describe('layering', () => {
  it.each(Object.entries(FORBIDDEN))('%s imports nothing it must not', (pkg, forbidden) => {
    const offenders = sources(pkg).flatMap((f) =>
      imports(f)
        .filter((i) => forbidden.test(i))
        .map((i) => `${path.relative(PACKAGES, f)} → ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it('core does no I/O: no node: module outside its Node crypto backend', () => {
    const offenders = sources('core')
      .filter((f) => !f.endsWith('crypto-node.ts'))
      .flatMap((f) =>
        imports(f)
          .filter((i) => i.startsWith('node:') || ['fs', 'net', 'http', 'https', 'child_process'].includes(i))
          .map((i) => `${path.basename(f)} → ${i}`),
      );
    expect(offenders).toEqual([]);
  });

  it('the Hono binding of the meter imports no Node module (it runs where there are none)', () => {
    // Type-only imports vanish from the JavaScript: only value imports are followed and counted.
    const valueImports = (f: string) =>
      [...fs.readFileSync(f, 'utf8').matchAll(/^(?:import|export) (?!type )[^'"]*from\s+['"]([^'"]+)['"]/gm)].map(
        (m) => m[1]!,
      );
    const reached = new Set<string>();
    const visit = (f: string) => {
      if (reached.has(f)) return;
      reached.add(f);
      for (const i of valueImports(f))
        if (i.startsWith('.')) visit(path.resolve(path.dirname(f), i.replace(/\.js$/, '.ts')));
    };
    visit(path.join(PACKAGES, 'meter/src/hono.ts'));
    expect(reached.size).toBeGreaterThanOrEqual(2); // it did follow the binding's own imports
    const offenders = [...reached].flatMap((f) =>
      valueImports(f)
        .filter((i) => i.startsWith('node:'))
        .map((i) => `${path.basename(f)} → ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the console is browser code: no node: module or Node built-in', () => {
    const offenders = sources('console').flatMap((f) =>
      imports(f)
        .filter(
          (i) => i.startsWith('node:') || ['fs', 'net', 'http', 'https', 'child_process', 'path', 'os'].includes(i),
        )
        .map((i) => `${path.basename(f)} → ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the console takes the facilitator’s answers from @svc/core type-only: no schema, nor zod, in the page', () => {
    const valueImports = (f: string) =>
      [...fs.readFileSync(f, 'utf8').matchAll(/^import (?!type )\{([^}]*)\}\s*from\s+['"]@svc\/core['"]/gm)].flatMap(
        (m) => m[1]!.split(',').map((name) => name.trim()),
      );
    const offenders = sources('console').flatMap((f) => [
      ...valueImports(f)
        .filter((name) => /Schema$|^z[A-Z]/.test(name))
        .map((name) => `${path.basename(f)} → ${name}`),
      ...imports(f)
        .filter((i) => i === 'zod' || i.startsWith('zod/'))
        .map((i) => `${path.basename(f)} → ${i}`),
    ]);
    expect(offenders).toEqual([]);
  });

  it('the facilitator’s domain code touches neither HTTP nor SQL', () => {
    const offenders = fs.readdirSync(path.join(PACKAGES, 'facilitator/src/domain')).flatMap((f) =>
      imports(path.join(PACKAGES, 'facilitator/src/domain', f))
        .filter((i) => /^(fastify|better-sqlite3|postgres|node:http)$|\/http\/|\/store\/(sqlite|postgres)/.test(i))
        .map((i) => `${f} → ${i}`),
    );
    expect(offenders).toEqual([]);
  });
});
