#!/usr/bin/env node
// The `svc` command. It sizes libuv's threadpool to the machine's cores first — the facilitator
// verifies and signs on that pool, and its size is read once, before any ES module loads (the
// ESM loader itself reads files on the pool) — then runs the compiled CLI (dist/cli.js).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

process.env.UV_THREADPOOL_SIZE ??= String(os.availableParallelism());
const cli = path.join(__dirname, '..', 'dist', 'cli.js');
if (!fs.existsSync(cli)) {
  console.error(
    'svc: the compiled CLI is missing (dist/cli.js). In the svc repository, run `npm ci` (it builds) or `npm run build`.',
  );
  process.exit(1);
}
import(pathToFileURL(cli).href).catch((err) => {
  console.error(err);
  process.exit(1);
});
