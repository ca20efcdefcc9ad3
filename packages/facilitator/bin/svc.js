#!/usr/bin/env node
// The `svc` command. The packages ship TypeScript sources; tsx runs them.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
