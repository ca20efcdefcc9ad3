#!/usr/bin/env node
// The `svc` command. It sizes libuv's threadpool to the machine's cores first — the facilitator
// verifies and signs on that pool, and its size is read once, before any ES module loads (the
// ESM loader itself reads files on the pool) — then runs the TypeScript sources through tsx.
'use strict';
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

process.env.UV_THREADPOOL_SIZE ??= String(os.availableParallelism());
import('tsx/esm/api')
  .then(({ register }) => {
    register();
    return import(pathToFileURL(path.join(__dirname, '..', 'src', 'cli.ts')).href);
  })
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
