// Before any test file: the packages' compiled JavaScript and the console are current (the tests
// import @svc/* as users do, from dist, and some start the compiled `svc` command).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const out = spawnSync(process.execPath, ['scripts/build.mjs'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, SVC_BUILD_QUIET: '1' },
  });
  if (out.status !== 0) throw new Error('the build failed (node scripts/build.mjs)');
}
