// Builds what the repository runs and ships, when it is stale, quickly when it is not: the
// packages' JavaScript, declarations and source maps (TypeScript's build mode, incremental over the
// project references of tsconfig.build.json) and the web console (into packages/facilitator/console).
// `npm ci` runs it (prepare), `npm start` and `npm test` before they begin. Plain JavaScript: it
// needs the dev dependencies (TypeScript, Vite) only when something must be built.
//
//   node scripts/build.mjs [--force] [--if-possible]   (--if-possible: without TypeScript, say so and exit 0)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const force = process.argv.includes('--force');
const started = performance.now();

function tscPath() {
  try {
    return require.resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

const tsc = tscPath();
const PACKAGES = ['core', 'ledger', 'meter', 'sdk', 'x402', 'facilitator'];
/** What this run built, for its last line: "up to date" only when it is the empty list. */
const rebuilt = [];
const missing = PACKAGES.filter((p) => !fs.existsSync(path.join(ROOT, 'packages', p, 'dist', 'index.js')));
if (tsc === null) {
  // A production install (npm ci --omit=dev) has no TypeScript: what was built is what runs.
  if (missing.length > 0) {
    const what = `TypeScript is not installed (a production install) and ${missing.map((p) => `@svc/${p}`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not built`;
    // As npm ci's prepare step (--if-possible) this is no reason to fail the install: say it once.
    if (process.argv.includes('--if-possible')) {
      console.warn(
        `build: skipped: ${what}. To run the facilitator, install with dev dependencies (npm ci) or install @svc/facilitator from its package.`,
      );
      process.exit(0);
    }
    console.error(
      `build: ${what}. Install with dev dependencies (npm ci) to build, or install @svc/facilitator from its package (npx svc start).`,
    );
    process.exit(1);
  }
} else {
  // A package whose dist/ was deleted still has its build info, and tsc -b would call it up to date.
  for (const p of missing) fs.rmSync(path.join(ROOT, 'packages', p, '.tsbuildinfo'), { force: true });
  const before = buildInfoTimes();
  const out = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json', ...(force ? ['--force'] : [])], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (out.status !== 0) {
    console.error('build: the TypeScript build failed');
    process.exit(out.status ?? 1);
  }
  removeOrphans();
  const after = buildInfoTimes();
  rebuilt.push(...PACKAGES.filter((p) => after[p] !== before[p]).map((p) => `@svc/${p}`));
}

/** Each package's build info, by when it was written: tsc -b rewrites it when it builds the package. */
function buildInfoTimes() {
  return Object.fromEntries(
    PACKAGES.map((p) => [
      p,
      fs.statSync(path.join(ROOT, 'packages', p, '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs,
    ]),
  );
}

/**
 * tsc -b never deletes what a removed source compiled to, and `files: ["dist"]` would pack it: every
 * output in a package's dist/ whose src/<same path>.ts is gone is removed.
 */
function removeOrphans() {
  for (const p of PACKAGES) {
    const dist = path.join(ROOT, 'packages', p, 'dist');
    if (!fs.existsSync(dist)) continue;
    for (const rel of fs.readdirSync(dist, { recursive: true })) {
      const stem = String(rel).match(/^(.*)\.(d\.ts\.map|js\.map|d\.ts|js)$/)?.[1];
      if (stem === undefined || fs.existsSync(path.join(ROOT, 'packages', p, 'src', `${stem}.ts`))) continue;
      fs.rmSync(path.join(dist, String(rel)));
    }
  }
}
const { ensureConsole } = await import('./build-console.mjs');
try {
  if (await ensureConsole({ force })) rebuilt.push('the console');
} catch (err) {
  if (err.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes("'vite'")) throw err;
  // No Vite: the facilitator starts without a console and says so at GET /.
}
if (process.env['SVC_BUILD_QUIET'] !== '1')
  console.log(
    rebuilt.length === 0
      ? `build: up to date (checked in ${((performance.now() - started) / 1000).toFixed(1)} s)`
      : `build: built ${rebuilt.join(', ')} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
