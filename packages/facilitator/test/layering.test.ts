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

/**
 * Every import a module makes of another, type-only ones included: a circle of types still ties the
 * modules' meanings together, so a newcomer cannot change one without reading the other.
 */
const ANY_IMPORT_RE =
  /(?:^|[\n;])\s*(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|[\n;])\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** A package's `#name` imports (package.json "imports"), each to the sources of all its conditions. */
function subpathImports(pkg: string): Map<string, string[]> {
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGES, pkg, 'package.json'), 'utf8')) as {
    imports?: Record<string, string | Record<string, string>>;
  };
  const out = new Map<string, string[]>();
  for (const [name, target] of Object.entries(manifest.imports ?? {})) {
    const targets = typeof target === 'string' ? [target] : Object.values(target);
    const files = targets
      .filter((t) => t.endsWith('.js'))
      .map((t) => path.join(PACKAGES, pkg, t.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')));
    out.set(name, [...new Set(files)]);
  }
  return out;
}

/** The modules of a package's src/ and which of them each one imports. */
function importGraph(pkg: string): Map<string, string[]> {
  const files = sources(pkg);
  const known = new Set(files);
  const subpaths = subpathImports(pkg);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = [...text.matchAll(ANY_IMPORT_RE)].flatMap((m): string[] => {
      const spec = m[1] ?? m[2] ?? m[3] ?? '';
      if (spec.startsWith('#')) return subpaths.get(spec) ?? [];
      if (!spec.startsWith('.')) return [];
      const resolved = path.resolve(path.dirname(file), spec);
      const candidates = [resolved.replace(/\.js$/, '.ts'), `${resolved}.ts`, path.join(resolved, 'index.ts')];
      return candidates.filter((c) => known.has(c)).slice(0, 1);
    });
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import circles of a graph: each strongly connected component of more than one module (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (;;) {
      const w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
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

  // Every package with sources, so that a new one is held to it too.
  const withSources = fs.readdirSync(PACKAGES).filter((p) => fs.existsSync(path.join(PACKAGES, p, 'src')));
  it.each(withSources)(
    '%s has no import circle: each module can be read and changed after the ones it imports',
    (pkg) => {
      const graph = importGraph(pkg);
      expect(graph.size).toBeGreaterThan(3); // it did read the package's sources
      const found = circles(graph).map((c) => c.map((f) => path.relative(PACKAGES, f)).join(' ⇄ '));
      expect(found).toEqual([]);
    },
  );

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
