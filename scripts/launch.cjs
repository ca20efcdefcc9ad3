#!/usr/bin/env node
// Runs a TypeScript entry through tsx after sizing libuv's threadpool to the machine's cores.
// The facilitator verifies and signs on that pool, and its size is read once, when the pool
// first starts: before any ES module loads (the ESM loader reads files on the pool), hence a
// CommonJS launcher. `node scripts/launch.cjs <entry.ts> [args…]`
'use strict';
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

process.env.UV_THREADPOOL_SIZE ??= String(os.availableParallelism());
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/launch.cjs <entry.ts> [args…]');
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(entry), ...args];
import('tsx/esm/api')
  .then(({ register }) => {
    register();
    return import(pathToFileURL(path.resolve(entry)).href);
  })
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
