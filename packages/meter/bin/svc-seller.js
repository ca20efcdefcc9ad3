#!/usr/bin/env node
// `svc-seller [init | token [--days N] | help]`: a seller's key (its payTo address) and its seller token.
import { sellerCommand } from '../dist/seller-cli.js';

sellerCommand(process.argv.slice(2)).catch((err) => {
  console.error(`svc-seller: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(typeof err?.exitCode === 'number' ? err.exitCode : 1);
});
