// npm run release:pack — builds, then packs every publishable package into release/ as the
// tarballs `npm publish` would upload, and prints each one's size packed and installed (unpacked).
// Nothing is published from here. Versions and changelogs: `npx changeset` to describe a change,
// `npm run release:version` to apply the pending ones.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PACKAGES = ['core', 'ledger', 'meter', 'sdk', 'x402', 'facilitator'];
const out = path.join(ROOT, 'release');
fs.mkdirSync(out, { recursive: true });
const packed = JSON.parse(
  execFileSync(
    'npm',
    ['pack', '--json', '--pack-destination', out, ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`])],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  ),
);
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
for (const p of packed)
  console.log(
    `${p.filename.padEnd(28)} ${kib(p.size).padStart(9)} packed, ${kib(p.unpackedSize).padStart(9)} unpacked, ${p.entryCount} files`,
  );
console.log(`release: ${packed.length} tarballs in ${path.relative(process.cwd(), out) || '.'}`);
