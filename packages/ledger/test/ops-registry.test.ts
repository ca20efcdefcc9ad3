import { describe, expect, it } from 'vitest';
import { LEDGER_OP_ARGS } from '@svc/core';
import { DEFAULT_OPS } from '@svc/ledger';

describe('the local ledger ops', () => {
  it('are exactly the ops @svc/core declares, each validated with the schema declared there', () => {
    expect([...DEFAULT_OPS.keys()].sort()).toEqual(Object.keys(LEDGER_OP_ARGS).sort());
    for (const [name, op] of DEFAULT_OPS) expect(op.args).toBe(LEDGER_OP_ARGS[name as keyof typeof LEDGER_OP_ARGS]);
  });
});
