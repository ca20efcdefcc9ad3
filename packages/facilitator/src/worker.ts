// Starts a worker thread on a module of this package, given without extension: the compiled
// JavaScript next to the caller (dist/…/name.js), or, when the caller runs from its TypeScript
// sources (the repository's tests run src/ through a loader), the .ts file — then the thread
// registers tsx itself, since Node 20 applies no --import loader to a worker's entry. Installed
// packages only ever take the first path: tsx is a development dependency.
//
//   startWorker(new URL('./sqlite-writer-thread', import.meta.url), workerData)
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export function startWorker(entry: URL, workerData: unknown): Worker {
  const fromSource = fileURLToPath(import.meta.url).endsWith('.ts');
  if (!fromSource) return new Worker(new URL(`${entry.href}.js`), { workerData });
  const tsx = resolveImport('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(`${entry.href}.ts`)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** The `import`-condition entry of a package (the CJS one misresolves when imported from ESM). */
function resolveImport(specifier: string): string {
  if (typeof import.meta.resolve === 'function') return import.meta.resolve(specifier);
  return pathToFileURL(createRequire(import.meta.url).resolve(specifier)).href.replace(/\.cjs$/, '.mjs');
}
