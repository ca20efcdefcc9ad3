// Builds the web console (packages/console) into packages/facilitator/console (shipped with @svc/facilitator) when there is no build or
// it is older than what it is made of; quick when the build is up to date. `npm start` runs it
// before the server, and the console's browser tests before they open the page.
//
//   node scripts/build-console.mjs [--force]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_DIR = path.join(ROOT, 'packages/console');
export const CONSOLE_DIST = path.join(ROOT, 'packages/facilitator/console');
const STAMP = path.join(CONSOLE_DIST, 'index.html');
/** What the bundle is made of: the console, @svc/core (bundled in), and the locked dependencies. */
const INPUTS = [
  'packages/console/index.html',
  'packages/console/vite.config.ts',
  'packages/console/package.json',
  'packages/console/src',
  'packages/core/src',
  'package-lock.json',
];

/** The newest modification time under `p` (0 if it does not exist). */
function newest(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(p).reduce((max, name) => Math.max(max, newest(path.join(p, name))), stat.mtimeMs);
}

export function consoleIsStale() {
  const built = newest(STAMP);
  return built === 0 || INPUTS.some((input) => newest(path.join(ROOT, input)) > built);
}

/** The built files with their sizes, raw and gzipped. */
export function bundleSizes() {
  const assets = path.join(CONSOLE_DIST, 'assets');
  return [STAMP, ...fs.readdirSync(assets).map((f) => path.join(assets, f))].map((file) => {
    const data = fs.readFileSync(file);
    return { file: path.relative(CONSOLE_DIST, file), bytes: data.length, gzip: gzipSync(data, { level: 9 }).length };
  });
}

/** Builds the console if it is stale (or `force`); returns whether it built. */
export async function ensureConsole(options = {}) {
  if (!options.force && !consoleIsStale()) return false;
  const { build } = await import('vite');
  await build({ root: CONSOLE_DIR, configFile: path.join(CONSOLE_DIR, 'vite.config.ts'), logLevel: 'warn' });
  return true;
}

async function main() {
  const started = performance.now();
  let built;
  try {
    built = await ensureConsole({ force: process.argv.includes('--force') });
  } catch (err) {
    // A production install without dev dependencies has no Vite: the facilitator starts without a console.
    if (err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes("'vite'")) {
      console.warn('console: not built (Vite is not installed); the facilitator answers GET / with how to build it');
      return;
    }
    throw err;
  }
  if (!built) {
    console.log('console: up to date (packages/facilitator/console)');
    return;
  }
  const sizes = bundleSizes();
  const total = sizes.reduce((sum, s) => ({ bytes: sum.bytes + s.bytes, gzip: sum.gzip + s.gzip }), {
    bytes: 0,
    gzip: 0,
  });
  console.log(
    `console: built in ${((performance.now() - started) / 1000).toFixed(1)} s → packages/facilitator/console, ${(total.bytes / 1024).toFixed(1)} KiB (${(total.gzip / 1024).toFixed(1)} KiB gzipped)`,
  );
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error('console: build failed:', err);
    process.exitCode = 1;
  });
}
