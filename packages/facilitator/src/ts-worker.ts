// Starts a worker thread on a TypeScript entry. The packages ship TypeScript run by tsx, and
// Node 20 applies no --import loader to a worker's entry, so the thread registers tsx itself.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const TSX_API = resolveImport('tsx/esm/api');

export function startTsWorker(entry: URL, workerData: unknown): Worker {
  const bootstrap = `import(${JSON.stringify(TSX_API)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** The `import`-condition entry of a package (the CJS one misresolves when imported from ESM). */
function resolveImport(specifier: string): string {
  if (typeof import.meta.resolve === 'function') return import.meta.resolve(specifier);
  return pathToFileURL(createRequire(import.meta.url).resolve(specifier)).href.replace(/\.cjs$/, '.mjs');
}
